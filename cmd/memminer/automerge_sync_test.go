package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/syncthing/sttest"
)

// TestAutoMergeAfterManyWrites: two real machines (Syncthing on
// 127.0.0.1, a daemon with --auto-merge on each) lose sight of each other;
// the one that wins writes six dated notes, each mined, so its palace no
// longer holds the content the two shared; the other writes two notes
// worded alike. The merge used to need a person (no base, and the copy's
// notes looked like other versions of the winner's): it is now clean, and
// both machines end with the same file holding all eight notes and no
// copy, without an open alert.
func TestAutoMergeAfterManyWrites(t *testing.T) {
	a, b := sttest.StartPair(t)
	alpha, bravo := newMachine(t, a), newMachine(t, b)
	ms := []*machine{alpha, bravo}
	for _, m := range ms {
		m.args = []string{"--auto-merge"}
	}
	const rel = "agents/jim/memory.md"
	alpha.appendNote(t, rel, "# Jim\n\n## Deploys\n\n- 2026-11-30: deployed api v1 to staging")
	for _, m := range ms {
		m.start(t)
	}
	converge(t, ms, time.Now(), "the seed mined on both machines", holding("deployed api v1"))

	ctx := context.Background()
	for _, m := range ms {
		if err := m.st.SetPaused(ctx, sttest.FolderID, true); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	note := func(m *machine, i int) {
		text := fmt.Sprintf("- 2026-12-%02d: deployed api v%d to production from %s", i+1, i+2, m.name)
		m.appendNote(t, rel, text)
		waitMined(t, m, text[2:])
		want = append(want, text+"\n")
	}
	for i := range 2 {
		note(alpha, i)
	}
	for i := range 6 {
		note(bravo, i) // each mined: bravo's palace forgets the shared content
	}
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(bravo.path(rel), later, later); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if err := m.st.SetPaused(ctx, sttest.FolderID, false); err != nil {
			t.Fatal(err)
		}
	}

	waitMerged(t, alpha, bravo, rel, want)
	if !strings.Contains(bravo.run.stderr.String(), "syncthing conflict merged") {
		t.Fatalf("bravo's daemon did not merge:\n%s", bravo.run.stderr)
	}
	for _, m := range ms {
		if strings.Contains(m.run.stderr.String(), "a memory file has a conflict copy") {
			t.Fatalf("%s alerted the conflict as open:\n%s", m.name, m.run.stderr)
		}
	}
	data, _ := os.ReadFile(alpha.path(rel))
	if strings.Contains(string(data), "(conflict:") {
		t.Fatalf("additions marked as conflicts:\n%s", data)
	}
}
