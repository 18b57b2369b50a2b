package wakeup

import (
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/words"
)

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"a b c d e f", 6},          // words win: 11 runes → 4
		{"internationalisation", 7}, // runes win: 20 → 7
		{"日本語のテキスト", 3},             // 8 runes → 3
		{"`pg_stat_archiver.failed_count > 0`", 12},      // 36 runes
		{"- [dwight] x (memory.md:1, 2026-11-03)\n", 13}, // 39 runes
	}
	for _, tt := range tests {
		got := EstimateTokens(tt.text)
		if got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.text, got, tt.want)
		}
		if w := len(strings.Fields(tt.text)); got < w {
			t.Errorf("EstimateTokens(%q) = %d, fewer than its %d words", tt.text, got, w)
		}
	}
}

func TestLinesBoundTheWhole(t *testing.T) {
	lines := []string{"## Identity", "- a: b", "", "## Essential story", "- [a] one two three (memory.md:1, 2026-01-01)", "x", "yy"}
	sum := 0
	for _, l := range lines {
		sum += LineTokens(l)
	}
	if whole := EstimateTokens(strings.Join(lines, "\n") + "\n"); whole > sum {
		t.Errorf("whole text costs %d, more than its lines' %d", whole, sum)
	}
}

func TestTruncate(t *testing.T) {
	plain := func(s string) string { return s }
	tests := []struct {
		text  string
		limit int
		want  string
		ok    bool
	}{
		{"short text", 10, "short text", true},
		{"one two three four five six seven eight nine ten", 6, "one two three…", true},
		{"one, two, three, four, five, six, seven", 5, "one, two…", true},
		{"supercalifragilisticexpialidocious word", 3, "", false},
	}
	for _, tt := range tests {
		got, ok := truncate(tt.text, tt.limit, plain)
		if got != tt.want || ok != tt.ok {
			t.Errorf("truncate(%q, %d) = %q, %v; want %q, %v", tt.text, tt.limit, got, ok, tt.want, tt.ok)
		}
		if ok && LineTokens(got) > tt.limit {
			t.Errorf("truncate(%q, %d) = %q costs %d", tt.text, tt.limit, got, LineTokens(got))
		}
	}
}

func TestFlatten(t *testing.T) {
	tests := []struct{ in, want string }{
		{"one\n  two\n\nthree", "one two three"},
		{"Deploy with:\n```sh\nmake deploy\n```\nthen check.", "Deploy with: then check."},
		{"```sh\nmake deploy\n```", "make deploy"},
		{"~~~\ncode\n~~~", "code"},
		{"a  \t b", "a b"},
	}
	for _, tt := range tests {
		if got := flatten(tt.in); got != tt.want {
			t.Errorf("flatten(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMarkerOf(t *testing.T) {
	tests := []struct {
		text, heading string
		want          float64
		pinned        bool
	}{
		{"Plain note about builds.", "Memory > Build", 0, false},
		{"Decision: use pgbouncer.", "", markDecision, false},
		{"**Decided** - we ship on Tuesdays.", "", markDecision, false},
		{"[ ] Rule: no Friday deploys.", "", markDecision, false},
		{"Important: the locale matters.", "", markImportant, false},
		{"The locale matters (important).", "", markImportant, false},
		{"The locale matters. IMPORTANT", "", markImportant, false},
		{"Disk filled on db-2. (pinned)", "", markPinned, true},
		{"Keep this #pinned", "", markPinned, true},
		{"! Never force-push release.", "", markImportant, false},
		{"![diagram](x.png) shows the flow", "", 0, false},
		{"The rules engine evaluates rules lazily.", "", 0, false},
		{"We pinned the dependency to 1.2.", "", 0, false},
		{"No release on Fridays.", "Memory > Rules", markDecision, false},
		{"Use tokens.json.", "Memory > Design system!", markImportant, false},
		{"Use tokens.json.", "Memory > Pinned", markPinned, true},
		{"Use tokens.json.", "Decisions > Important", markImportant, false},
	}
	for _, tt := range tests {
		got, pinned := markerOf(tt.text, tt.heading)
		if got != tt.want || pinned != tt.pinned {
			t.Errorf("markerOf(%q, %q) = %v, %v; want %v, %v", tt.text, tt.heading, got, pinned, tt.want, tt.pinned)
		}
	}
}

func TestDecay(t *testing.T) {
	for _, tt := range []struct {
		age  time.Duration
		want float64
	}{{-time.Hour, 1}, {0, 1}, {halfLife, 0.5}, {2 * halfLife, 0.25}} {
		if got := decay(tt.age, halfLife); got != tt.want {
			t.Errorf("decay(%v) = %v, want %v", tt.age, got, tt.want)
		}
	}
}

func TestWeightedJaccard(t *testing.T) {
	v := newVocab()
	a := v.terms("pgbouncer runs in transaction mode")
	b := v.terms("pgbouncer runs in session mode")
	c := v.terms("the web bundle is built with electron-vite")
	w := v.weights()
	if got := weightedJaccard(a, a, w); got != 1 {
		t.Errorf("a note with itself = %v, want 1", got)
	}
	ab, ac := weightedJaccard(a, b, w), weightedJaccard(a, c, w)
	if ab <= 0.3 || ab >= 1 || ac != 0 {
		t.Errorf("related = %v (want in (0.3, 1)), unrelated = %v (want 0)", ab, ac)
	}
	if got := words.Split("Use electron-vite, db-2 and max_client_conn."); strings.Join(got, " ") != "use electron-vite db-2 and max_client_conn" {
		t.Errorf("words kept identifiers badly: %q", got)
	}
}
