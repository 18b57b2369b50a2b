package govern

import (
	"regexp"
	"strings"
	"testing"
)

// cueCases are texts the expressions match, in the spellings their case
// folding allows (upper case, ſ for s, the Kelvin sign for k), and some
// they do not.
var cueCases = []string{
	"status: superseded — we moved", "STATUS: **SUPERSEDED**", "Old plan (ſuperſeded).", "[Superseded 2026-11-01] plan",
	"This is superseded by the runbook.", "old #superseded", "status: Deprecated", "(OBSOLETE) the old host",
	"[archived] notes", "#stale", "#outdated marker", "Status: ſtale", "Status : * * deprecated",
	"status: approved", "(Approved)", "#APPROVED", "review: 2026-10-01", "Next_Review: 2026-10-01",
	"REVIEW DATE: 2026-10-01", "next review:2026-10-01", "#tag and #Ünïcode", "(#k8s)", "{#Kelvin-ok}",
	"done (added 2026-03-02)", "(added 2026-03-02) first", "Plain note.", "a#b is no tag", "#123 is an issue",
	"stale talk without a marker", "reviewed: no", "Approved\u212Aelvin", "\u212Aeep (archived)",
}

// TestExpressionCues holds each may function to what it promises: an
// expression never matches a text that lacks its cue, so skipping the
// expression on such a text changes no classification.
func TestExpressionCues(t *testing.T) {
	for _, text := range cueCases {
		checkCues(t, text)
	}
}

func FuzzExpressionCues(f *testing.F) {
	for _, text := range cueCases {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) { checkCues(t, text) })
}

func checkCues(t *testing.T, text string) {
	t.Helper()
	folded := fold(text)
	cues := []struct {
		name string
		re   *regexp.Regexp
		may  bool
	}{
		{"superseded", supersededRe(), maySupersede(folded)},
		{"stale", staleRe(), mayStale(folded)},
		{"approved", approvedRe(), mayApprove(folded)},
		{"review", reviewRe(), mayReview(folded)},
		{"tag", tagRe(), mayTag(text)},
		{"added", addedRe(), mayAdded(text)},
	}
	for _, c := range cues {
		if c.re.MatchString(text) && !c.may {
			t.Errorf("%s expression matches %q, but its cue says it cannot", c.name, text)
		}
	}
}

// TestCueCasesMatch keeps cueCases a test of something: most of its texts
// are matched by an expression, and the spellings only case folding
// allows are among them.
func TestCueCasesMatch(t *testing.T) {
	matched := 0
	for _, text := range cueCases {
		for _, re := range []*regexp.Regexp{supersededRe(), staleRe(), approvedRe(), reviewRe(), tagRe(), addedRe()} {
			if re.MatchString(text) {
				matched++
				break
			}
		}
	}
	if matched < len(cueCases)*2/3 {
		t.Fatalf("%d of %d cue cases match an expression", matched, len(cueCases))
	}
	for _, text := range []string{"Old plan (ſuperſeded).", "Status: ſtale", "\u212Aeep (archived)"} {
		if !strings.ContainsAny(text, "ſ\u212A") || !(supersededRe().MatchString(text) || staleRe().MatchString(text)) {
			t.Fatalf("%q should match through case folding", text)
		}
	}
}

func BenchmarkClassify(b *testing.B) {
	texts := []string{
		"Rule: tls-certs runs on vault for compliance reasons (added 2026-03-19).",
		"Important: staging-db is rebuilt by pagerduty because it kept timing out (added 2026-01-15).",
		"metrics-exporter must not touch the-weekly-report until the next release.",
		"Deploys from Jenkins (superseded 2026-11-01). #ci review: 2026-12-01",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Classify(File{}, "agent memory > Open questions", texts[i%len(texts)])
	}
}
