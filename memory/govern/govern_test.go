package govern

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func day(s string) time.Time {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestClassifyStatus(t *testing.T) {
	tests := []struct {
		fm            map[string]any
		heading, text string
		want          Status
		reason        string
	}{
		{nil, "", "Plain note.", None, ""},
		{nil, "", "status: superseded — we no longer use Notion.", Superseded, "marked superseded"},
		{nil, "", "Status: **superseded**", Superseded, "marked superseded"},
		{nil, "", "Old plan (superseded).", Superseded, "marked superseded"},
		{nil, "", "[superseded] old plan", Superseded, "marked superseded"},
		{nil, "", "Deploys from Jenkins (superseded 2026-11-01).", Superseded, "marked superseded"},
		{nil, "", "Deploys from Jenkins (superseded on 2026-11-01)", Superseded, "marked superseded"},
		{nil, "", "Deploys from Jenkins (superseded by the release pipeline).", Superseded, "marked superseded"},
		{nil, "", "We keep old notes (superseded ones stay as history).", None, ""},
		{nil, "", "This note is superseded by the runbook.", Superseded, "marked superseded"},
		{nil, "", "Old plan #superseded", Superseded, "marked superseded"},
		{nil, "", "~~Deploys go through Jenkins.~~", Superseded, "struck through"},
		{nil, "Memory > Superseded", "Plain note.", Superseded, "under heading Superseded"},
		{map[string]any{"status": "superseded"}, "", "Plain note.", Superseded, "frontmatter status: superseded"},
		{map[string]any{"superseded_by": "new.md"}, "", "Plain note.", Superseded, "frontmatter superseded_by"},
		{nil, "", "We record which notes are superseded and why.", None, ""},
		{nil, "", "Run `grep 'status: superseded'` to list them.", None, ""},
		{nil, "", "[x] Move the site to the CDN.", Stale, "marked done"},
		{nil, "", "[ ] Move the site to the CDN.", None, ""},
		{nil, "", "status: deprecated — use v2.", Stale, "marked deprecated"},
		{nil, "", "The v1 API (obsolete).", Stale, "marked obsolete"},
		{nil, "", "The v1 API is deprecated in favour of v2, which all clients use.", None, ""},
		{nil, "Memory > Archive", "Plain note.", Stale, "under heading Archive"},
		{nil, "Memory > Done", "Plain note.", Stale, "under heading Done"},
		{map[string]any{"status": "Archived"}, "", "Plain note.", Stale, "frontmatter status: Archived"},
		{nil, "", "status: approved — deploys need two reviews.", Approved, "marked approved"},
		{nil, "", "Deploys need two reviews (approved).", Approved, "marked approved"},
		{map[string]any{"status": "approved"}, "", "Plain note.", Approved, "frontmatter status: approved"},
		{map[string]any{"status": "approved"}, "", "Old rule (superseded).", Superseded, "marked superseded"},
		{map[string]any{"status": "superseded"}, "", "status: approved", Superseded, "frontmatter status: superseded"},
		{nil, "Memory > Work", "Plain note.", None, ""},
	}
	for _, tt := range tests {
		f, warnings := ParseFile(tt.fm)
		if len(warnings) > 0 {
			t.Errorf("ParseFile(%v) warns %v", tt.fm, warnings)
		}
		got := Classify(f, tt.heading, tt.text)
		if got.Status != tt.want || got.Reason != tt.reason {
			t.Errorf("Classify(%v, %q, %q) = %q (%q), want %q (%q)", tt.fm, tt.heading, tt.text, got.Status, got.Reason, tt.want, tt.reason)
		}
	}
}

func TestClassifyDates(t *testing.T) {
	defer func(f func() time.Time) { today = f }(today)
	today = func() time.Time { return time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		fm             map[string]any
		heading, text  string
		date, review   string // empty: none
		staleAfterDays int
	}{
		{nil, "", "No date here.", "", "", 0},
		{nil, "", "Pooling via pgbouncer (added 2026-05-17).", "2026-05-17", "", 0},
		{nil, "", "Moved 2026-01-02, confirmed 2026-03-04.", "2026-03-04", "", 0},
		{nil, "Journal > 2026-10-21", "Incident.", "2026-10-21", "", 0},
		{nil, "", "Since the 2026-09 migration.", "", "", 0},
		{nil, "", "Build 12026-01-02 and x2026-01-02.", "", "", 0},
		{nil, "", "Invalid 2026-13-45.", "", "", 0},
		// A date after the note was written is a due date.
		{nil, "", "Deadline 2027-01-01.", "", "", 0},
		{nil, "", "Deadline 2026-11-20.", "2026-11-20", "", 0},
		{nil, "", "Moves on 2027-01-01 (added 2026-12-04).", "2026-12-04", "", 0},
		{nil, "", "Was due 2026-11-01, done 2026-11-03 (added 2026-11-30).", "2026-11-30", "", 0},
		{nil, "Plans > 2027-03-01", "Kick-off (added 2026-12-04).", "2026-12-04", "", 0},
		{nil, "Journal > 2026-10-21", "Written up later (added 2026-10-25).", "2026-10-25", "", 0},
		{nil, "", "Rotate keys (added 2026-05-01, review: 2026-11-01).", "2026-05-01", "2026-11-01", 0},
		{map[string]any{"review_date": day("2026-12-24"), "updated": "2026-06-01"}, "", "Plain.", "2026-06-01", "2026-12-24", 0},
		{map[string]any{"next_review": "2026-12-24"}, "", "Plain, review: 2026-10-01.", "", "2026-10-01", 0},
		{map[string]any{"stale_after": "30d"}, "", "Plain.", "", "", 30},
		{map[string]any{"stale_after": 14}, "", "Plain.", "", "", 14},
		{map[string]any{"stale_after": "2w"}, "", "Plain.", "", "", 14},
	}
	for _, tt := range tests {
		f, warnings := ParseFile(tt.fm)
		if len(warnings) > 0 {
			t.Errorf("ParseFile(%v) warns %v", tt.fm, warnings)
		}
		got := Classify(f, tt.heading, tt.text)
		if s := format(got.Date); s != tt.date {
			t.Errorf("Classify(%v, %q, %q).Date = %q, want %q", tt.fm, tt.heading, tt.text, s, tt.date)
		}
		if s := format(got.Review); s != tt.review {
			t.Errorf("Classify(%v, %q, %q).Review = %q, want %q", tt.fm, tt.heading, tt.text, s, tt.review)
		}
		if want := time.Duration(tt.staleAfterDays) * 24 * time.Hour; got.StaleAfter != want {
			t.Errorf("Classify(%v, ...).StaleAfter = %v, want %v", tt.fm, got.StaleAfter, want)
		}
	}
}

func format(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("2006-01-02")
}

func TestParseFileWarns(t *testing.T) {
	f, warnings := ParseFile(map[string]any{"review_date": "soon", "stale_after": "forever", "status": "approved"})
	if len(warnings) != 2 || !f.Review.IsZero() || f.StaleAfter != 0 || f.Status != Approved {
		t.Errorf("ParseFile = %+v, %q; want two warnings and the rest kept", f, warnings)
	}
}

func TestClassifyTags(t *testing.T) {
	tests := []struct {
		fm   map[string]any
		text string
		want []string
	}{
		{nil, "No tags, issue #12, a#b, url http://x/#frag.", nil},
		{nil, "Failover runbook #postgres #Ops.", []string{"ops", "postgres"}},
		{nil, "(#db) and [#infra/net]", []string{"db", "infra/net"}},
		{nil, "Use `#include <x>` here.\n```c\n#define X\n```", nil},
		{map[string]any{"tags": []any{"Backend", "db"}}, "Note #db.", []string{"backend", "db"}},
		{map[string]any{"tags": "a, b c"}, "Note.", []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		f, _ := ParseFile(tt.fm)
		if got := Classify(f, "", tt.text).Tags; !slices.Equal(got, tt.want) {
			t.Errorf("Classify(%v, %q).Tags = %q, want %q", tt.fm, tt.text, got, tt.want)
		}
	}
}

func TestStaleness(t *testing.T) {
	now := day("2026-12-01")
	mtime := day("2026-11-20")
	tests := []struct {
		name   string
		n      Note
		def    time.Duration
		stale  bool
		reason string
	}{
		{"fresh by mtime", Note{}, 0, false, ""},
		{"old date", Note{Date: day("2026-08-01")}, 0, true, "not updated since 2026-08-01"},
		{"exactly 90 days", Note{Date: now.Add(-DefaultStaleAfter)}, 0, false, ""},
		{"hive default", Note{Date: day("2026-11-01")}, 14 * 24 * time.Hour, true, "not updated since 2026-11-01"},
		{"file beats hive", Note{Date: day("2026-11-01"), StaleAfter: 60 * 24 * time.Hour}, 14 * 24 * time.Hour, false, ""},
		{"never", Note{Date: day("2020-01-01"), StaleAfter: Never}, 0, false, ""},
		{"review due today", Note{Review: now}, 0, true, "review due 2026-12-01"},
		{"review ahead", Note{Review: day("2026-12-02")}, 0, false, ""},
		{"marked", Note{Status: Stale, Reason: "marked done"}, 0, true, "marked done"},
	}
	for _, tt := range tests {
		stale, reason := tt.n.Staleness(mtime, now, tt.def)
		if stale != tt.stale || reason != tt.reason {
			t.Errorf("%s: Staleness = %v, %q; want %v, %q", tt.name, stale, reason, tt.stale, tt.reason)
		}
	}
	if stale, reason := (Note{}).Staleness(day("2026-01-01"), now, 0); !stale || reason != "not updated since 2026-01-01" {
		t.Errorf("undated note of an old file: %v, %q", stale, reason)
	}
}

func TestParseAgeAndWhen(t *testing.T) {
	for s, want := range map[string]time.Duration{"90d": 90 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "36h": 36 * time.Hour, "7": 7 * 24 * time.Hour, "never": Never, "0": Never} {
		if got, err := ParseAge(s); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "x", "-3d", "1y", "3.5d"} {
		if _, err := ParseAge(s); err == nil {
			t.Errorf("ParseAge(%q) accepted", s)
		}
	}
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	if got, _ := ParseSince("7d", now); !got.Equal(now.Add(-7 * 24 * time.Hour)) {
		t.Errorf("ParseSince(7d) = %v", got)
	}
	if got, _ := ParseSince("2026-11-01", now); !got.Equal(day("2026-11-01")) {
		t.Errorf("ParseSince(2026-11-01) = %v", got)
	}
	if got, _ := ParseUntil("2026-11-01", now); !got.Equal(day("2026-11-02").Add(-time.Nanosecond)) {
		t.Errorf("ParseUntil(2026-11-01) = %v, want the end of that day", got)
	}
	for _, s := range []string{"never", "yesterday", "2026-02-30"} {
		if _, err := ParseSince(s, now); err == nil {
			t.Errorf("ParseSince(%q) accepted", s)
		}
	}
}

func TestParseStatus(t *testing.T) {
	for _, s := range []string{"approved", " Stale", "SUPERSEDED"} {
		if _, err := ParseStatus(s); err != nil {
			t.Errorf("ParseStatus(%q): %v", s, err)
		}
	}
	if _, err := ParseStatus("draft"); err == nil {
		t.Error("ParseStatus(draft) accepted")
	}
}

// Files that differ in anything Classify reads have different keys.
func TestFileKey(t *testing.T) {
	first := day("2026-11-01")
	base := File{Status: Approved, Reason: "frontmatter status: approved", Date: first, Review: first.AddDate(0, 2, 0), StaleAfter: 30 * 24 * time.Hour, Tags: []string{"infra", "ops"}}
	edits := map[string]func(*File){
		"status":      func(f *File) { f.Status = Superseded },
		"reason":      func(f *File) { f.Reason = "frontmatter status: Approved" },
		"date":        func(f *File) { f.Date = first.AddDate(0, 0, 1) },
		"no date":     func(f *File) { f.Date = time.Time{} },
		"date's zone": func(f *File) { f.Date = first.In(time.FixedZone("X", 0)) },
		"review":      func(f *File) { f.Review = time.Time{} },
		"stale_after": func(f *File) { f.StaleAfter = Never },
		"tags":        func(f *File) { f.Tags = []string{"infra"} },
		"tag split":   func(f *File) { f.Tags = []string{"infra ops"} },
		"no tags":     func(f *File) { f.Tags = nil },
	}
	same := base
	same.Tags = slices.Clone(base.Tags)
	if base.Key() != same.Key() {
		t.Fatalf("equal files have keys %q and %q", base.Key(), same.Key())
	}
	for name, edit := range edits {
		f := base
		f.Tags = slices.Clone(base.Tags)
		edit(&f)
		if f.Key() == base.Key() {
			t.Errorf("%s: key %q unchanged", name, f.Key())
		}
	}
	if (File{}).Key() == "" {
		t.Error("the empty file's key is empty, which means not recorded")
	}
	// A field added to File must be added to Key, and to the edits above:
	// a re-mine would otherwise keep governance the new field changes.
	if n := reflect.TypeFor[File]().NumField(); n != 6 {
		t.Errorf("File has %d fields; Key and this test know 6", n)
	}
}

// TestNormalTag: the one form of a tag that writing, searching and packs
// compare (issue 54: "--tag ops-" never matched "#ops").
func TestNormalTag(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ops", "ops"},
		{"#Ops", "ops"},
		{" ops- ", "ops"},
		{"ops/db.", "ops/db"},
		{"Ops_Team", "ops_team"},
		{"#", ""},
	} {
		if got := NormalTag(tt.in); got != tt.want {
			t.Errorf("NormalTag(%q) = %q, want %q", tt.in, got, tt.want)
		}
		// A note tagged so carries the same tag.
		if tt.want != "" {
			if got := Classify(File{}, "", "a note #"+strings.TrimPrefix(strings.TrimSpace(tt.in), "#")).Tags; len(got) != 1 || got[0] != tt.want {
				t.Errorf("a note tagged %q carries %q, want %q", tt.in, got, tt.want)
			}
		}
	}
}

// TestStatement: what a note states, without memminer's markers after it
// and an approval marker around it.
func TestStatement(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"status: approved — deploys go out from the release branch", "deploys go out from the release branch"},
		{"[approved] Backups run at 02:00 (added 2026-12-01)", "Backups run at 02:00"},
		{"Backups run at 02:00 #approved", "Backups run at 02:00 "},
		{"Approved vendors are listed in Notion.", "Approved vendors are listed in Notion."},
		{"db-3 is the primary (added 2026-12-01) (review: 2027-01-01)", "db-3 is the primary"},
	} {
		if got := Statement(tt.in); got != tt.want {
			t.Errorf("Statement(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
