package merge

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/markdown"
)

// The generated conflicts: a base memory file, and two sides that each made
// a few edits of the kinds agents make — mostly appends at the end of a
// section, sometimes a note edited or removed.

var vocab = strings.Fields(`build test deploy cache palace wing note agent hive sync
	socket daemon model vector search token budget review release branch commit
	lint race timeout retry backoff config schema index shard merge conflict device`)

type generated struct {
	// older is the file before base (base's last note not yet written).
	older, base, ours, theirs string
	// oursEarlier is ours after its first edits: the palace of ours' node
	// mined it before the conflict, so it is a candidate base too.
	oursEarlier string
	// ancestor is the content both sides started from: base, or
	// oursEarlier when that synced before the copy's edits.
	ancestor string
}

type genFile struct {
	sections []string
	notes    [][]string
}

func (f genFile) render() string {
	var b strings.Builder
	b.WriteString("# Memory\n")
	for i, s := range f.sections {
		fmt.Fprintf(&b, "\n## %s\n\n", s)
		for _, n := range f.notes[i] {
			b.WriteString("- " + n + "\n")
		}
	}
	return b.String()
}

func (f genFile) clone() genFile {
	c := genFile{sections: append([]string(nil), f.sections...)}
	for _, ns := range f.notes {
		c.notes = append(c.notes, append([]string(nil), ns...))
	}
	return c
}

func sentence(r *rand.Rand, id string) string {
	n := 4 + r.IntN(8)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = vocab[r.IntN(len(vocab))]
	}
	return id + " " + strings.Join(ws, " ")
}

// edit applies a side's edits to f.
func edit(r *rand.Rand, f genFile, side string, ops int) genFile {
	f = f.clone()
	for k := range ops {
		s := r.IntN(len(f.sections))
		switch p := r.IntN(100); {
		case p < 70: // append at the end of a section
			f.notes[s] = append(f.notes[s], sentence(r, fmt.Sprintf("%s-added-%d-%d", side, k, r.IntN(1000))))
		case p < 75: // insert in the middle
			at := r.IntN(len(f.notes[s]) + 1)
			f.notes[s] = append(f.notes[s][:at], append([]string{sentence(r, fmt.Sprintf("%s-inserted-%d-%d", side, k, r.IntN(1000)))}, f.notes[s][at:]...)...)
		case p < 90: // edit: a few words changed or added
			if len(f.notes[s]) == 0 {
				continue
			}
			i := r.IntN(len(f.notes[s]))
			f.notes[s][i] += " " + vocab[r.IntN(len(vocab))] + " (" + side + " edit)"
		default: // delete
			if len(f.notes[s]) == 0 {
				continue
			}
			i := r.IntN(len(f.notes[s]))
			f.notes[s] = append(f.notes[s][:i], f.notes[s][i+1:]...)
		}
	}
	return f
}

func generate(n int, seed uint64) []generated {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]generated, n)
	for c := range out {
		f := genFile{}
		for s := range 2 + r.IntN(4) {
			f.sections = append(f.sections, fmt.Sprintf("Section %d", s))
			var ns []string
			for i := range 2 + r.IntN(8) {
				ns = append(ns, sentence(r, fmt.Sprintf("base-%d-%d", s, i)))
			}
			f.notes = append(f.notes, ns)
		}
		prev := f.clone()
		last := len(prev.notes) - 1
		prev.notes[last] = prev.notes[last][:len(prev.notes[last])-1]
		mid := edit(r, f, "ours", 1+r.IntN(2))
		from := f
		if r.IntN(3) == 0 {
			from = mid // ours' first edits synced before the copy's
		}
		out[c] = generated{
			older:       prev.render(),
			base:        f.render(),
			oursEarlier: mid.render(),
			ancestor:    from.render(),
			ours:        edit(r, mid, "ours", 1+r.IntN(3)).render(),
			theirs:      edit(r, from, "theirs", 1+r.IntN(4)).render(),
		}
	}
	return out
}

// outcome is what one generated merge came to.
type outcome struct {
	clean bool
	lost  []string
}

// judge merges g and counts the notes lost: a note of either side missing
// from the result that the other side neither removed nor changed (from
// the base) and that no reported conflict names.
func judge(t testing.TB, g generated) outcome {
	// The palace of ours' node has ours, ours' earlier edit, the base and
	// the content before it.
	bases := []Base{*baseOf(t, g.ours), *baseOf(t, g.oursEarlier), *baseOf(t, g.base), *baseOf(t, g.older)}
	res, err := Merge(Input{Bases: bases, Ours: []byte(g.ours), Theirs: []byte(g.theirs), Device: "laptop", Date: "2026-12-01"})
	if err != nil {
		t.Fatalf("merge: %v\nbase:\n%s\nours:\n%s\ntheirs:\n%s", err, g.base, g.ours, g.theirs)
	}
	texts := func(s string) map[string]bool {
		doc, err := markdown.Parse([]byte(s), markdown.MemoryOptions())
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, n := range doc.Notes {
			m[n.Heading+"\x00"+strings.TrimSuffix(n.Text, " "+marker)] = true
		}
		return m
	}
	base, ours, theirs, merged := texts(g.ancestor), texts(g.ours), texts(g.theirs), texts(string(res.Merged))
	reported := map[string]bool{}
	for _, c := range res.Conflicts {
		reported[c.Heading+"\x00"+c.Ours] = true
		reported[c.Heading+"\x00"+c.Theirs] = true
	}
	var lost []string
	check := func(mine, other map[string]bool) {
		for n := range mine {
			if merged[n] || reported[n] {
				continue
			}
			if base[n] && !other[n] {
				continue // the other side removed or changed it
			}
			lost = append(lost, n)
		}
	}
	check(ours, theirs)
	check(theirs, ours)
	return outcome{clean: !res.NeedsReview, lost: lost}
}

func TestGeneratedConflictsLoseNothing(t *testing.T) {
	for i, g := range generate(200, 1) {
		if o := judge(t, g); len(o.lost) > 0 {
			t.Errorf("conflict %d lost %q\nbase:\n%s\nours:\n%s\ntheirs:\n%s", i, o.lost, g.base, g.ours, g.theirs)
		}
	}
}

// BenchmarkGeneratedConflicts merges 200 generated conflicts per iteration
// and reports the share merged with no person needed and the notes lost.
func BenchmarkGeneratedConflicts(b *testing.B) {
	gs := generate(200, 1)
	clean, lost := 0, 0
	for b.Loop() {
		clean, lost = 0, 0
		for _, g := range gs {
			o := judge(b, g)
			if o.clean {
				clean++
			}
			lost += len(o.lost)
		}
	}
	b.ReportMetric(100*float64(clean)/float64(len(gs)), "%clean")
	b.ReportMetric(float64(lost), "notes-lost")
	b.ReportMetric(float64(len(gs)), "conflicts")
}
