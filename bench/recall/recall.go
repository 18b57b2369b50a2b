// Package recall measures what an agent receives from memory on small,
// realistic hives: whether search puts the answering note first, whether
// the prompt hook gives a prompt the note it needs and nothing when memory
// does not bear on it, and whether a question about something the hive
// never covers gets nothing. The labelled hives are in dev.json (tuned on)
// and blind.json (written by someone who saw only the spec, before the
// tuning, and never tuned on). See BENCHMARKS.md, "Recall on small hives".
package recall

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/palace"
)

var (
	//go:embed dev.json
	devJSON []byte
	//go:embed blind.json
	blindJSON []byte
)

// Set is a labelled set of hives.
type Set struct {
	About string `json:"about"`
	Hives []Hive `json:"hives"`
}

// Hive is one small hive and the prompts asked of it.
type Hive struct {
	Name string `json:"name"`
	// Files are the hive's memory files by path relative to the hive.
	Files map[string]string `json:"files"`
	// Direct questions share a rare word with their answer; paraphrases
	// share no content word; tasks are instructions the note helps with.
	Direct     []Query `json:"direct"`
	Paraphrase []Query `json:"paraphrase"`
	Task       []Query `json:"task"`
	// Unrelated are ordinary prompts no note helps with; OtherDomain are
	// questions about what the hive never covers.
	Unrelated   []string `json:"unrelated"`
	OtherDomain []string `json:"other_domain"`
}

// Query is a prompt and its answer: a substring of exactly one note.
type Query struct {
	Query  string `json:"query"`
	Answer string `json:"answer"`
}

// Sets returns the labelled sets by name: "dev", then "blind".
func Sets() (map[string]Set, error) {
	out := map[string]Set{}
	for name, data := range map[string][]byte{"dev": devJSON, "blind": blindJSON} {
		s, err := harness.Decode[Set](name+".json", data)
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}

// Write lays h's files out under dir, which becomes its hive.
func (h Hive) Write(dir string) error {
	for rel, text := range h.Files {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Ranked counts a set of questions answered by search.
type Ranked struct {
	Queries, Top1, Top3 int
	// RR sums the reciprocal ranks (0 for an answer not returned).
	RR float64
	// Misses are the questions whose answer is not first, with the
	// first hit's text.
	Misses []string
}

// MRR is the mean reciprocal rank.
func (r Ranked) MRR() float64 {
	if r.Queries == 0 {
		return 0
	}
	return r.RR / float64(r.Queries)
}

func (r *Ranked) add(q Query, hits []palace.Hit) {
	r.Queries++
	rank := answerRank(q.Answer, hits)
	if rank == 1 {
		r.Top1++
	}
	if rank >= 1 && rank <= 3 {
		r.Top3++
	}
	if rank >= 1 {
		r.RR += 1 / float64(rank)
	}
	if rank != 1 {
		first := "(nothing)"
		if len(hits) > 0 {
			first = hits[0].Text
		}
		r.Misses = append(r.Misses, fmt.Sprintf("%q: answer at %d, first %q", q.Query, rank, first))
	}
}

// answerRank is the 1-based rank of the hit holding answer, 0 if none.
func answerRank(answer string, hits []palace.Hit) int {
	for i, h := range hits {
		if strings.Contains(h.Text, answer) {
			return i + 1
		}
	}
	return 0
}

// Counted counts prompts by whether something happened to them.
type Counted struct {
	Prompts, Yes int
	// Which are the prompts counted as yes, or, where noted, as no.
	Which []string
}

// Result is what one model does on a set.
type Result struct {
	Model string
	// Search with the CLI's defaults.
	Direct, Paraphrase, Task Ranked
	// OtherEmpty counts other-domain questions search answers with
	// nothing (Which: those answered).
	OtherEmpty Counted
	// HookNoise counts unrelated prompts the hook gives any note;
	// HookOther the same for other-domain questions (Which: those given
	// one).
	HookNoise, HookOther Counted
	// HookDirect, HookParaphrase and HookTask count related prompts the
	// hook gives their note (Which: those not given it).
	HookDirect, HookParaphrase, HookTask Counted
	// HookNotes is the number of notes the hook gave over every prompt.
	HookNotes int
}

// HookRelated sums the related prompts given their note.
func (r Result) HookRelated() Counted {
	var c Counted
	for _, x := range []Counted{r.HookDirect, r.HookParaphrase, r.HookTask} {
		c.Prompts += x.Prompts
		c.Yes += x.Yes
	}
	return c
}

// Hook returns the notes the prompt hook would give an agent for prompt.
type Hook func(ctx context.Context, p *palace.Palace, prompt string) ([]palace.Hit, error)

// Run mines each hive of set under tmp with e (nil: lexical) and measures
// search and hook on it.
func Run(ctx context.Context, set Set, tmp string, e embed.Embedder, hook Hook) (Result, error) {
	r := Result{Model: "lexical"}
	if e != nil {
		r.Model = e.Model()
	}
	for _, h := range set.Hives {
		if err := runHive(ctx, h, tmp, e, hook, &r); err != nil {
			return r, fmt.Errorf("hive %s: %w", h.Name, err)
		}
	}
	return r, nil
}

func runHive(ctx context.Context, h Hive, tmp string, e embed.Embedder, hook Hook, r *Result) error {
	dir, err := os.MkdirTemp(tmp, "hive-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := h.Write(dir); err != nil {
		return err
	}
	p, done, err := harness.MineTemp(ctx, tmp, dir, e)
	if err != nil {
		return err
	}
	defer done()
	search := func(q string) ([]palace.Hit, error) {
		return p.Search(ctx, q, palace.SearchOptions{Results: 10, MinRelevance: palace.DefaultMinRelevance})
	}
	for _, set := range []struct {
		qs  []Query
		out *Ranked
	}{{h.Direct, &r.Direct}, {h.Paraphrase, &r.Paraphrase}, {h.Task, &r.Task}} {
		for _, q := range set.qs {
			hits, err := search(q.Query)
			if err != nil {
				return fmt.Errorf("search %q: %w", q.Query, err)
			}
			set.out.add(q, hits)
		}
	}
	for _, q := range h.OtherDomain {
		hits, err := search(q)
		if err != nil {
			return fmt.Errorf("search %q: %w", q, err)
		}
		r.OtherEmpty.Prompts++
		if len(hits) == 0 {
			r.OtherEmpty.Yes++
		} else {
			r.OtherEmpty.Which = append(r.OtherEmpty.Which, fmt.Sprintf("%q → %q (%.2f)", q, hits[0].Text, hits[0].Relevance))
		}
	}
	given := func(q string, c *Counted) error {
		hits, err := hook(ctx, p, q)
		if err != nil {
			return fmt.Errorf("hook %q: %w", q, err)
		}
		r.HookNotes += len(hits)
		c.Prompts++
		if len(hits) > 0 {
			c.Yes++
			c.Which = append(c.Which, fmt.Sprintf("%q → %q (%.2f)", q, hits[0].Text, hits[0].Relevance))
		}
		return nil
	}
	for _, q := range h.Unrelated {
		if err := given(q, &r.HookNoise); err != nil {
			return err
		}
	}
	for _, q := range h.OtherDomain {
		if err := given(q, &r.HookOther); err != nil {
			return err
		}
	}
	for _, set := range []struct {
		qs  []Query
		out *Counted
	}{{h.Direct, &r.HookDirect}, {h.Paraphrase, &r.HookParaphrase}, {h.Task, &r.HookTask}} {
		for _, q := range set.qs {
			hits, err := hook(ctx, p, q.Query)
			if err != nil {
				return fmt.Errorf("hook %q: %w", q.Query, err)
			}
			r.HookNotes += len(hits)
			set.out.Prompts++
			if answerRank(q.Answer, hits) > 0 {
				set.out.Yes++
			} else {
				set.out.Which = append(set.out.Which, q.Query)
			}
		}
	}
	return nil
}
