package pack

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
)

func TestParse(t *testing.T) {
	p, err := Parse("deploy", "packs/deploy.md", []byte("\ufeff---\r\nuse:\r\n  - wing:Ops\r\n  - \"query:how do we deploy\"\r\n  - tag:#Deploy\r\navoid: status:Stale\r\nstale_after: 2w\r\nblock_stale: true\r\nreview_date: 2027-01-01\r\n---\r\n\r\nShip it.\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{Wing, "ops", 3}, {Query, "how do we deploy", 4}, {Tag, "deploy", 5}}
	if len(p.Use) != len(want) {
		t.Fatalf("use = %+v", p.Use)
	}
	for i, e := range want {
		if p.Use[i] != e {
			t.Errorf("use[%d] = %+v, want %+v", i, p.Use[i], e)
		}
	}
	if len(p.Avoid) != 1 || p.Avoid[0] != (Entry{Status, "stale", 6}) {
		t.Errorf("avoid = %+v", p.Avoid)
	}
	spaced, err := Parse("s", "s.md", []byte("---\nuse:\n  - wing: ops\n  - query: how we deploy\n---\n"))
	if err != nil || len(spaced.Use) != 2 || spaced.Use[0] != (Entry{Wing, "ops", 3}) || spaced.Use[1] != (Entry{Query, "how we deploy", 4}) {
		t.Errorf("entries written with a space: %+v, %v", spaced, err)
	}
	if p.StaleAfter != 14*24*time.Hour || !p.BlockStale || !p.ReviewDate.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) || p.Body != "Ship it." {
		t.Errorf("pack = %+v", p)
	}
	for _, bad := range []struct{ content, want string }{
		{"---\nuse:\n  - wing:ok\n  - {a: b, c: d}\n---\n", "x.md:4: an entry is one line"},
		{"---\nuse:\n  - wing:ok\n  - color: red\n---\n", "x.md:4: entry \"color:red\": unknown kind"},
		{"---\nuse:\n  - wing:../up\n---\n", "x.md:3: entry \"wing:../up\""},
		{"---\nuse:\n  - wing:a\nuse:\n  - wing:b\n---\n", "x.md:4:"},
		{"---\n- a\n- b\n---\n", "x.md:2: the frontmatter must be keys and values"},
		{"---\nuse:\n  - wing:a\nblock_stale: maybe\n---\n", "x.md:4: block_stale: \"maybe\""},
		{"---\nuse:\n  - wing:a\nreview_date: soon\n---\n", "x.md:4: review_date: \"soon\""},
		{"---\nuse:\n  - \"tag:two words\"\n---\n", "x.md:3: entry \"tag:two words\": a tag is one word"},
		{"---\n---\n", "x.md:1: the frontmatter is empty"},
	} {
		_, err := Parse("x", "x.md", []byte(bad.content))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", bad.content, err, bad.want)
		}
	}
}

func TestStateOf(t *testing.T) {
	edit := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	p := &Pack{Modified: edit}
	at := func(days int, kind string) Mark { return Mark{Time: edit.AddDate(0, 0, days), Kind: kind, Note: kind} }
	tests := []struct {
		name   string
		marks  []Mark
		review bool
		row    int
	}{
		{"none", nil, false, 0},
		{"three bad", []Mark{at(1, Bad), at(2, Bad), at(3, Used), at(3, Bad)}, true, 3},
		{"good between", []Mark{at(1, Bad), at(2, Good), at(3, Bad), at(4, Bad)}, false, 2},
		{"reviewed clears", []Mark{at(1, Bad), at(2, Bad), at(3, Bad), at(4, Reviewed)}, false, 0},
		{"before the edit", []Mark{at(-3, Bad), at(-2, Bad), at(-1, Bad), at(1, Bad)}, false, 1},
	}
	for _, tt := range tests {
		st := StateOf(p, tt.marks)
		if st.ReviewNeeded != tt.review || st.BadInARow != tt.row {
			t.Errorf("%s: %+v, want review %v, %d in a row", tt.name, st, tt.review, tt.row)
		}
	}
}

func TestMarksRoundTrip(t *testing.T) {
	hive := t.TempDir()
	if err := os.MkdirAll(Dir(hive), 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for _, m := range []Mark{{now, Bad, "pam:x", "it\nmissed"}, {now.Add(time.Second), Used, "", ""}, {now.Add(2 * time.Second), Good, "jim", ""}} {
		if err := AddMark(context.Background(), hive, "deploy", m); err != nil {
			t.Fatal(err)
		}
	}
	if err := AddMark(context.Background(), hive, "deploy", Mark{Time: now, Kind: "great"}); !errors.Is(err, ErrBadMark) {
		t.Errorf("a mark great: %v", err)
	}
	data, _ := os.ReadFile(LogFile(hive, "deploy"))
	want := "2026-12-04T10:00:00Z bad pam-x: it missed\n2026-12-04T10:00:01Z used -\n2026-12-04T10:00:02Z good jim\n"
	if string(data) != want {
		t.Errorf("log = %q, want %q", data, want)
	}
	marks, err := Marks(hive, "deploy")
	if err != nil || len(marks) != 3 || marks[0].By != "pam-x" || marks[0].Note != "it missed" || marks[2].Kind != Good {
		t.Errorf("marks = %+v, %v", marks, err)
	}
}

// TestRender mines a small hive and renders packs over it: governed
// selection, avoid over use, the budget and block_stale.
func TestRender(t *testing.T) {
	hive := t.TempDir()
	write := func(rel, content string) {
		path := filepath.Join(hive, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("agents/a/memory.md", "# a\n\n- plain fact one #x\n- approved fact #approved\n- old fact (superseded)\n- tagged fact #skip\n")
	write("agents/a/inbox.md", "# inbox\n\n- a hypothesis (inbox: hypothesis, risk low)\n")
	write("agents/b/memory.md", "# b\n\n- 2020-01-01 an ancient fact\n")
	old := time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(hive, "agents/b/memory.md"), old, old); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := palace.Open(ctx, t.TempDir(), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := mine.Mine(ctx, p, hive, mine.Options{Hive: hive}); err != nil {
		t.Fatal(err)
	}
	texts := func(r Rendered) []string {
		var out []string
		for _, n := range r.Notes {
			out = append(out, n.Text)
		}
		return out
	}
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	pk := &Pack{Name: "t", File: "packs/t.md", Use: []Entry{{Kind: Wing, Value: "a"}, {Kind: File, Value: "agents/b/memory.md"}}, Avoid: []Entry{{Kind: Tag, Value: "skip"}}}
	r, err := Render(ctx, p, pk, Options{Hive: hive, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(texts(r), "|"); got != "approved fact #approved|plain fact one #x|2020-01-01 an ancient fact" {
		t.Errorf("notes = %s", got)
	}
	if len(r.Warnings) != 1 || r.Warnings[0].File != filepath.Join(hive, "agents/b/memory.md") || r.Warnings[0].Kind != WarnStale {
		t.Errorf("warnings = %+v", r.Warnings)
	}
	if r.Tokens > DefaultTokens || r.Tokens == 0 {
		t.Errorf("tokens = %d", r.Tokens)
	}
	all, err := Render(ctx, p, pk, Options{Hive: hive, Now: now, IncludeInbox: true})
	if err != nil || !strings.Contains(strings.Join(texts(all), "|"), "a hypothesis") {
		t.Errorf("with the inbox: %v %v", texts(all), err)
	}
	head := Rendered{Pack: r.Pack, File: r.File, Body: r.Body, Warnings: r.Warnings, LeftOut: len(r.Notes)} // nothing fits: the longest head
	for b := wakeup.EstimateTokens(head.Text()); b <= r.Tokens+5; b++ {
		got, err := Render(ctx, p, pk, Options{Hive: hive, Now: now, Tokens: b})
		if err != nil || got.Tokens > b || len(got.Notes)+got.LeftOut != len(r.Notes) {
			t.Errorf("budget %d: %d tokens, %d notes + %d left out, %v", b, got.Tokens, len(got.Notes), got.LeftOut, err)
		}
	}
	budget := r.Tokens - 1
	small, err := Render(ctx, p, pk, Options{Hive: hive, Now: now, Tokens: budget})
	if err != nil || small.Tokens > budget || small.LeftOut == 0 || len(small.Notes) == 0 {
		t.Errorf("budget %d: %d tokens, %d notes, %d left out, %v", budget, small.Tokens, len(small.Notes), small.LeftOut, err)
	}
	typo := &Pack{Name: "t", File: "packs/t.md", Use: []Entry{{Kind: File, Value: "agents/a/memroy.md", Line: 3}}}
	if r, err := Render(ctx, p, typo, Options{Hive: hive, Now: now}); err != nil || len(r.Warnings) != 1 || r.Warnings[0].Kind != WarnMissing || len(r.Notes) != 0 {
		t.Errorf("a file: entry naming no file: %+v, %v", r, err)
	}
	pk.BlockStale = true
	if _, err := Render(ctx, p, pk, Options{Hive: hive, Now: now}); !errors.Is(err, ErrStale) {
		t.Errorf("block_stale: %v", err)
	}
	pk.StaleAfter = -1 // never: nothing is stale by age
	if _, err := Render(ctx, p, pk, Options{Hive: hive, Now: now}); err != nil {
		t.Errorf("stale_after never: %v", err)
	}
}

func TestLinkedPacksDir(t *testing.T) {
	hive, elsewhere := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "x.md"), []byte("---\nuse: wing:a\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, Dir(hive)); err != nil {
		t.Skip(err)
	}
	if _, err := Load(hive, "x"); !errors.Is(err, ErrLinkedDir) {
		t.Errorf("load through a linked packs/: %v", err)
	}
	if _, err := Names(hive); !errors.Is(err, ErrLinkedDir) {
		t.Errorf("names through a linked packs/: %v", err)
	}
	if err := AddMark(context.Background(), hive, "x", Mark{Time: time.Now(), Kind: Good}); !errors.Is(err, ErrLinkedDir) {
		t.Errorf("mark through a linked packs/: %v", err)
	}
	if _, err := New(hive, "y", Spec{Use: []Entry{{Kind: Wing, Value: "a"}}}); !errors.Is(err, ErrLinkedDir) {
		t.Errorf("new through a linked packs/: %v", err)
	}
}

// TestRenderUnknownWing: a wing: entry (use or avoid) naming a wing the
// palace does not have is the palace's unknown-wing error, as for
// search --wing, not "no notes match".
func TestRenderUnknownWing(t *testing.T) {
	hive := t.TempDir()
	if err := os.MkdirAll(filepath.Join(hive, "agents", "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hive, "agents", "a", "memory.md"), []byte("# a\n\n- a fact\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := palace.Open(ctx, t.TempDir(), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := mine.Mine(ctx, p, hive, mine.Options{Hive: hive}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		use, avoid []Entry
		wantErr    bool
	}{
		{name: "known", use: []Entry{{Kind: Wing, Value: "a"}}},
		{name: "use", use: []Entry{{Kind: Wing, Value: "nosuch"}}, wantErr: true},
		{name: "avoid", use: []Entry{{Kind: Wing, Value: "a"}}, avoid: []Entry{{Kind: Wing, Value: "nosuch"}}, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pk := &Pack{Name: "t", File: "packs/t.md", Use: tt.use, Avoid: tt.avoid}
			_, err := Render(ctx, p, pk, Options{Hive: hive})
			if tt.wantErr != errors.Is(err, palace.ErrUnknownWing) || tt.wantErr && !strings.Contains(err.Error(), "wing:nosuch") {
				t.Errorf("err = %v, want unknown wing: %v", err, tt.wantErr)
			}
		})
	}
}
