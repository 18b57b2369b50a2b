package capture

import (
	"testing"
)

// directives are sentences a user says to make a rule of: each must be
// captured, with the text, kind and risk given ("" text: the sentence).
var directives = []struct {
	say, text, kind, risk string
}{
	{"Remember that the staging DB is db-7.", "The staging DB is db-7.", KindRemember, LowRisk},
	{"remember that the staging DB is db-7", "The staging DB is db-7", KindRemember, LowRisk},
	{"Please remember that our CI runs on Buildkite, not GitHub Actions.", "Our CI runs on Buildkite, not GitHub Actions.", KindRemember, LowRisk},
	{"Hi! Remember that the staging DB is db-7.", "The staging DB is db-7.", KindRemember, LowRisk},
	{"Keep in mind: the design system lives in packages/ui.", "The design system lives in packages/ui.", KindRemember, LowRisk},
	{"Don't forget that the API rate limit is 600 requests per minute.", "The API rate limit is 600 requests per minute.", KindRemember, LowRisk},
	{"For future reference, the on-call rota is in PagerDuty under team Atlas.", "The on-call rota is in PagerDuty under team Atlas.", KindRemember, LowRisk},
	{"Remember to always regenerate the mocks after changing an interface.", "Always regenerate the mocks after changing an interface.", KindRemember, LowRisk},
	{"Remember that prod deploys need two approvals.", "Prod deploys need two approvals.", KindRemember, HighRisk},
	{"Remember that the Stripe webhook secret lives in Vault under payments/stripe.", "The Stripe webhook secret lives in Vault under payments/stripe.", KindRemember, HighRisk},
	{"From now on, run make lint before every commit.", "", KindForward, LowRisk},
	{"from now on use British spelling in the docs", "From now on use British spelling in the docs", KindForward, LowRisk},
	{"Going forward, every new endpoint needs an OpenAPI entry.", "", KindForward, LowRisk},
	{"In the future, put screenshots under docs/img.", "", KindForward, LowRisk},
	{"Next time, ask before you rewrite a whole file.", "", KindForward, LowRisk},
	{"OK, from now on deploy only from the release branch.", "From now on deploy only from the release branch.", KindForward, HighRisk},
	{"Whenever you touch the schema, run make generate afterwards.", "", KindForward, LowRisk},
	{"Always use pnpm in this repo.", "", KindRule, LowRisk},
	{"Never commit directly to main.", "", KindRule, LowRisk},
	{"Never run migrations against production by hand.", "", KindRule, HighRisk},
	{"always write tests first for bug fixes", "Always write tests first for bug fixes", KindRule, LowRisk},
	{"We always squash-merge pull requests.", "", KindRule, LowRisk},
	{"You should never edit generated files under gen/.", "", KindRule, LowRisk},
	{"Make sure to always pin Docker base images by digest.", "", KindRule, LowRisk},
	{"Don't ever force-push to a shared branch.", "", KindRule, HighRisk},
	{"Important: never log request bodies.", "Never log request bodies.", KindRule, LowRisk},
	{"We decided to drop support for Node 18.", "", KindDecision, HighRisk},
	{"We've decided on Postgres 16 for the new service.", "", KindDecision, LowRisk},
	{"We agreed that feature flags go through LaunchDarkly.", "", KindDecision, LowRisk},
	{"The team decided that all dates are stored in UTC.", "", KindDecision, LowRisk},
	{"Decision: the mobile app talks to the gateway, never to services directly.", "", KindDecision, LowRisk},
	{"We are going with Tailwind for the new dashboard.", "", KindDecision, LowRisk},
	{"No, we use pnpm in this repo, not npm.", "We use pnpm in this repo, not npm.", KindRule, LowRisk},
	{"Actually, we use tabs for indentation in Go files.", "We use tabs for indentation in Go files.", KindRule, LowRisk},
	{"No — use zerolog, not logrus.", "Use zerolog, not logrus.", KindRule, LowRisk},
	{"That's wrong: we never mock the database in integration tests.", "We never mock the database in integration tests.", KindRule, LowRisk},
	{"Use ISO dates instead of US dates in the UI.", "", KindRule, LowRisk},
	{"Don't use moment.js; use date-fns.", "", KindRule, LowRisk},
	{"In this repo we write commit subjects in the imperative.", "", KindRule, LowRisk},
	{"The convention is one package per directory under internal/.", "", KindRule, LowRisk},
	{"Our policy is that every dependency bump gets its own PR.", "", KindRule, LowRisk},
	{"In this project you must run gofmt before pushing.", "", KindRule, LowRisk},
}

// chatter are sentences a user says in passing: none is captured.
var chatter = []string{
	"thanks",
	"Thanks, that looks good.",
	"fix the typo in README.md",
	"Can you fix the typo in README.md?",
	"rename foo to bar",
	"Please rename the handler to ServeLogin.",
	"run the tests again",
	"looks good to me",
	"Great, ship it.",
	"What does this function do?",
	"Do you remember what we changed yesterday",
	"why is the build failing?",
	"Let's use yarn for now.",
	"Just this once, skip the linter.",
	"Skip the slow tests this time.",
	"Never mind, it works now.",
	"I've never seen that error before.",
	"It always fails on the second run.",
	"You always forget the imports!",
	"Maybe we should always use pnpm.",
	"I think we decided that last week?",
	"Have we decided on the database yet",
	"We might move to Postgres in the future.",
	"See you next time!",
	"no",
	"No, that's fine.",
	"Actually, let's look at the other file.",
	"Remember when the deploy broke last Friday?",
	"Add a test for the empty case.",
	"Can you remember to close the file handle in this function?",
	"We use it a lot.",
	"$ go test ./... -run TestFoo",
	"```go",
	"panic: runtime error: index out of range [3] with length 3",
	"12:04:05 ERROR connection refused",
	"ok",
	"Use the second option.",
	"Delete the unused imports.",
	"The build is green now.",
	"Move the helper into utils.go and update the callers.",
	"Please always",
	"That's not what I asked for.",
}

func TestClassifyDirectives(t *testing.T) {
	for _, tc := range directives {
		d, ok := Classify(tc.say)
		if !ok {
			t.Errorf("Classify(%q): not captured", tc.say)
			continue
		}
		want := tc.text
		if want == "" {
			want = tc.say
		}
		if d.Text != want || d.Kind != tc.kind || d.Risk != tc.risk {
			t.Errorf("Classify(%q) = %+v, want {Text:%s Kind:%s Risk:%s}", tc.say, d, want, tc.kind, tc.risk)
		}
	}
}

func TestClassifyChatter(t *testing.T) {
	for _, s := range chatter {
		if d, ok := Classify(s); ok {
			t.Errorf("Classify(%q) captured %+v: chatter must not be", s, d)
		}
	}
}

// TestClassifierPrecisionRecall measures the classifier on the labelled
// sentences above (BENCHMARKS.md, "Capture"): recall is the directives
// captured, precision the captured sentences that are directives.
func TestClassifierPrecisionRecall(t *testing.T) {
	if len(directives) < 30 || len(chatter) < 30 {
		t.Fatalf("the labelled set is too small: %d directives, %d chatter lines (want 30 of each)", len(directives), len(chatter))
	}
	tp, fp := 0, 0
	for _, tc := range directives {
		if _, ok := Classify(tc.say); ok {
			tp++
		}
	}
	for _, s := range chatter {
		if _, ok := Classify(s); ok {
			fp++
		}
	}
	recall := float64(tp) / float64(len(directives))
	precision := 1.0
	if tp+fp > 0 {
		precision = float64(tp) / float64(tp+fp)
	}
	t.Logf("capture classifier: %d directives, %d chatter: recall %.1f%% (%d/%d), precision %.1f%% (%d/%d)",
		len(directives), len(chatter), 100*recall, tp, len(directives), 100*precision, tp, tp+fp)
	if recall < 0.9 || precision < 0.95 {
		t.Errorf("recall %.2f, precision %.2f: want at least 0.90 and 0.95", recall, precision)
	}
}

func TestSentences(t *testing.T) {
	got := Sentences("Hi! Remember that the staging DB is db-7.internal. Thanks\n\n```\nalways do X\n```\n> never quote\n- From now on, lint.\n    indented code\nv1.2 is out")
	want := []string{"Hi!", "Remember that the staging DB is db-7.internal.", "Thanks", "From now on, lint.", "v1.2 is out"}
	if len(got) != len(want) {
		t.Fatalf("Sentences = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sentence %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestDirectivesOncePerTranscript(t *testing.T) {
	got := Directives([]string{
		"Remember that the staging DB is db-7. Can you fix the typo?",
		"thanks\nremember that the staging DB is db-7",
		"From now on, run make lint before every commit.",
	})
	if len(got) != 2 || got[0].Text != "The staging DB is db-7." || got[1].Kind != KindForward {
		t.Errorf("Directives = %+v, want the staging DB once, then the lint rule", got)
	}
}
