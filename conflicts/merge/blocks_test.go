package merge

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// blocks are markdown blocks of the kinds memory files hold.
var blocks = []string{
	"- a bullet %d",
	"* a star bullet %d\n  with a second line",
	"1. a numbered item %d",
	"- [ ] a task %d",
	"A paragraph %d that runs\nover two lines.",
	"Build %d with:\n\n```sh\nmake all\n```",
	"```go\nfunc f%d() {}\n```",
	"> a quote %d",
	"| a | b |\n|---|---|\n| %d | 2 |",
	"- a bullet %d\n  - with a nested one",
	"A long note %d that the miner cuts into pieces." + strings.Repeat(" It goes on and on about the build cache and the deploy steps.", 10),
}

func randomFile(r *rand.Rand, id *int) []string {
	var parts []string
	for s := range 1 + r.IntN(3) {
		parts = append(parts, fmt.Sprintf("## S%d", s))
		for range 1 + r.IntN(4) {
			*id++
			parts = append(parts, fmt.Sprintf(blocks[r.IntN(len(blocks))], *id))
		}
	}
	return parts
}

func join(parts []string) string { return "# M\n\n" + strings.Join(parts, "\n\n") + "\n" }

// TestMergeBlocks merges random edits of files made of every kind of
// block: the merge must always lay its result out (or fail with a typed
// error, never wrong), and keep every added block.
func TestMergeBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	failed := 0
	for c := range 300 {
		id := 0
		base := randomFile(r, &id)
		side := func() []string {
			out := append([]string(nil), base...)
			for range 1 + r.IntN(3) {
				id++
				at := 1 + r.IntN(len(out))
				block := fmt.Sprintf(blocks[r.IntN(len(blocks))], id)
				if r.IntN(4) == 0 && at < len(out) && !strings.HasPrefix(out[at], "## ") {
					out[at] = block // an edit
					continue
				}
				out = append(out[:at], append([]string{block}, out[at:]...)...)
			}
			return out
		}
		ours, theirs := side(), side()
		res, err := Merge(Input{Bases: basesOf(t, join(base)), Ours: []byte(join(ours)), Theirs: []byte(join(theirs)), Device: "d", Date: "2026-12-01"})
		if err != nil {
			if !errors.Is(err, ErrUnrenderable) && !errors.Is(err, ErrUnmappable) {
				t.Fatalf("case %d: %v", c, err)
			}
			failed++
			t.Logf("case %d: %v\nbase:\n%s\nours:\n%s\ntheirs:\n%s", c, err, join(base), join(ours), join(theirs))
			continue
		}
		for _, n := range res.FromTheirs {
			first, _, _ := strings.Cut(n.Text, "\n")
			if !strings.Contains(string(res.Merged), first) {
				t.Fatalf("case %d: %q missing from\n%s", c, first, res.Merged)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of 300 merges could not be laid out", failed)
	}
}
