package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

// Ks are the cut-offs recall is measured at; the search asks for the largest.
var Ks = []int{5, 10}

// Config describes one benchmark run.
type Config struct {
	// Conversations are the samples to run.
	Conversations []Conversation
	// Modes are the search modes to measure, each over every question.
	Modes []palace.Mode
	// Embedder makes the vectors; nil mines a lexical palace (then only
	// the lexical mode can run).
	Embedder embed.Embedder
	// Hive chooses the markdown mapping.
	Hive HiveOptions
	// Dir holds the hive (Dir/hive) and the palace (Dir/palace). A palace
	// left there by an earlier run is mined incrementally.
	Dir string
	// Dump, when set, receives one JSON line per question and mode with
	// the evidence and what the search returned.
	Dump io.Writer
	// Logger receives progress; nil means a discarding logger.
	Logger *slog.Logger
	// MinRelevance is the search's relevance floor
	// (palace.SearchOptions.MinRelevance); zero keeps every hit.
	MinRelevance float64
}

// Recall holds recall at each cut-off for one group of questions.
type Recall struct {
	Questions  int     `json:"questions"`
	SessionR5  float64 `json:"session_recall@5"`
	SessionR10 float64 `json:"session_recall@10"`
	TurnR5     float64 `json:"turn_recall@5"`
	TurnR10    float64 `json:"turn_recall@10"`
}

// MineStats describes the one mine of the hive.
type MineStats struct {
	Files int   `json:"files"`
	Turns int   `json:"turns"`
	Bytes int64 `json:"bytes"`
	// Notes is how many notes the palace holds for the conversations.
	Notes int `json:"notes"`
	// Mined is how many notes this mine added (embedded): all of them in
	// a fresh palace, none when a kept palace was already up to date.
	Mined          int     `json:"mined"`
	Seconds        float64 `json:"seconds"`
	NotesPerSecond float64 `json:"notes_per_second"`
	// SplitTurns counts turns the miner split into more than one note
	// (turns longer than the note bound).
	SplitTurns int `json:"split_turns"`
}

// Latency summarises query times in milliseconds.
type Latency struct {
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	Max float64 `json:"max_ms"`
}

// Result is the outcome of one mode over every question.
type Result struct {
	Mode  string `json:"mode"`
	Model string `json:"model"`
	// Conversations is how many conversations were run.
	Conversations int `json:"conversations"`
	// Asked counts every question searched, all categories.
	Asked int `json:"asked"`
	// Unscored counts questions whose data names no evidence turn; they
	// are asked but not scored.
	Unscored int `json:"unscored"`
	// Recall is over categories 1–4 together; its fields sit at the top
	// level of the JSON object.
	Recall
	// ByCategory has one entry per category "1" … "5".
	ByCategory map[string]Recall `json:"by_category"`
	// Adversarial is category 5, reported apart from the rest.
	Adversarial Recall    `json:"adversarial"`
	Mine        MineStats `json:"mine"`
	Latency     Latency   `json:"query_latency"`
	Cores       int       `json:"cores"`
}

// Run mines the conversations into a fresh palace and asks every question
// in each mode.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Conversations) == 0 {
		return nil, errors.New("no conversations to run")
	}
	for _, m := range cfg.Modes {
		if m != palace.LexicalOnly && cfg.Embedder == nil {
			return nil, fmt.Errorf("mode %s needs an embedding model", m)
		}
	}
	hiveDir := filepath.Join(cfg.Dir, "hive")
	palaceDir := filepath.Join(cfg.Dir, "palace")
	files, err := WriteHive(hiveDir, cfg.Conversations, cfg.Hive)
	if err != nil {
		return nil, err
	}
	p, err := palace.Open(ctx, palaceDir, palace.Options{Embedder: cfg.Embedder, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("open palace: %w", err)
	}
	defer p.Close()

	log.Info("mining", "conversations", len(files))
	sum, err := mine.Mine(ctx, p, hiveDir, mine.Options{})
	if err != nil {
		return nil, fmt.Errorf("mine hive: %w", err)
	}
	if len(sum.Problems) > 0 {
		return nil, fmt.Errorf("mine hive: %s: %s", sum.Problems[0].Path, sum.Problems[0].Err)
	}
	stats := MineStats{Files: len(files), Mined: sum.NotesAdded, Seconds: sum.Duration.Seconds()}
	if stats.Seconds > 0 {
		stats.NotesPerSecond = float64(stats.Mined) / stats.Seconds
	}
	noteTurn := map[string]string{} // note id -> canonical dia id
	for _, f := range files {
		if info, err := os.Stat(f.Path); err == nil {
			stats.Bytes += info.Size()
		}
		stats.Turns += len(f.Turns)
		split, err := mapNotes(p.Notes(f.Wing), f, noteTurn)
		if err != nil {
			return nil, err
		}
		stats.SplitTurns += split
	}
	stats.Notes = len(noteTurn)
	log.Info("mined", "notes", stats.Notes, "added", stats.Mined, "seconds", stats.Seconds)

	model := embed.Lexical
	if cfg.Embedder != nil {
		model = cfg.Embedder.Model()
	}
	var results []Result
	for _, mode := range cfg.Modes {
		res, err := ask(ctx, p, files, noteTurn, mode, cfg.MinRelevance, cfg.Dump)
		if err != nil {
			return nil, err
		}
		res.Model = model
		if mode == palace.LexicalOnly {
			res.Model = embed.Lexical
		}
		res.Mine = stats
		res.Conversations = len(files)
		res.Cores = runtime.NumCPU()
		results = append(results, res)
		log.Info("asked", "mode", mode, "questions", res.Asked)
	}
	return results, nil
}

// mapNotes records the dia id of each note of f by the line it starts on,
// and checks every note is one turn and every turn has a note. It returns
// how many turns were split into several notes.
func mapNotes(notes []palace.Note, f hiveFile, noteTurn map[string]string) (int, error) {
	perTurn := map[string]int{}
	for _, n := range notes {
		id, ok := f.Turns[n.Line]
		if !ok {
			return 0, fmt.Errorf("wing %s: note at line %d is not a dialog turn: %.60q", f.Wing, n.Line, n.Text)
		}
		noteTurn[n.ID] = id
		perTurn[id]++
	}
	split := 0
	for line, id := range f.Turns {
		switch c := perTurn[id]; {
		case c == 0:
			return 0, fmt.Errorf("wing %s: turn %s (line %d) has no note", f.Wing, id, line)
		case c > 1:
			split++
		}
	}
	return split, nil
}

// counts tallies hits for one group of questions.
type counts struct {
	n                int
	s5, s10, t5, t10 int
}

func (c *counts) add(turnAt, sessionAt int) {
	c.n++
	if sessionAt >= 0 && sessionAt < 5 {
		c.s5++
	}
	if sessionAt >= 0 && sessionAt < 10 {
		c.s10++
	}
	if turnAt >= 0 && turnAt < 5 {
		c.t5++
	}
	if turnAt >= 0 && turnAt < 10 {
		c.t10++
	}
}

func (c *counts) recall() Recall {
	r := Recall{Questions: c.n}
	if c.n == 0 {
		return r
	}
	f := func(x int) float64 { return float64(x) / float64(c.n) }
	r.SessionR5, r.SessionR10, r.TurnR5, r.TurnR10 = f(c.s5), f(c.s10), f(c.t5), f(c.t10)
	return r
}

// dumpLine is one line of Config.Dump.
type dumpLine struct {
	Mode     string   `json:"mode"`
	Wing     string   `json:"wing"`
	Category int      `json:"category"`
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Hits     []string `json:"hits"`
	// Relevance is each hit's absolute relevance.
	Relevance []float64 `json:"relevance"`
	TurnAt    int       `json:"turn_at"`
	SessionAt int       `json:"session_at"`
}

func ask(ctx context.Context, p *palace.Palace, files []hiveFile, noteTurn map[string]string, mode palace.Mode, floor float64, dump io.Writer) (Result, error) {
	res := Result{Mode: mode.String(), ByCategory: map[string]Recall{}}
	var all counts
	byCat := map[int]*counts{}
	var times []time.Duration
	k := slices.Max(Ks)
	for _, f := range files {
		for _, q := range f.Conv.Questions {
			start := time.Now()
			hits, err := p.Search(ctx, q.Text, palace.SearchOptions{Wings: []string{f.Wing}, Results: k, Mode: mode, MinRelevance: floor})
			times = append(times, time.Since(start))
			if err != nil {
				return res, fmt.Errorf("search %q in %s: %w", q.Text, f.Wing, err)
			}
			res.Asked++
			if len(q.Evidence) == 0 {
				res.Unscored++
				continue
			}
			ids := make([]string, len(hits))
			rel := make([]float64, len(hits))
			for i, h := range hits {
				ids[i] = noteTurn[h.ID]
				rel[i] = h.Relevance
			}
			turnAt, sessionAt := firstHit(ids, q.Evidence)
			c := byCat[q.Category]
			if c == nil {
				c = &counts{}
				byCat[q.Category] = c
			}
			c.add(turnAt, sessionAt)
			if q.Category >= 1 && q.Category <= 4 {
				all.add(turnAt, sessionAt)
			}
			if dump != nil {
				line, _ := json.Marshal(dumpLine{Mode: res.Mode, Wing: f.Wing, Category: q.Category, Question: q.Text,
					Evidence: q.Evidence, Hits: ids, Relevance: rel, TurnAt: turnAt, SessionAt: sessionAt})
				if _, err := dump.Write(append(line, '\n')); err != nil {
					return res, fmt.Errorf("write dump: %w", err)
				}
			}
		}
	}
	res.Recall = all.recall()
	for cat, c := range byCat {
		res.ByCategory[strconv.Itoa(cat)] = c.recall()
	}
	if c := byCat[5]; c != nil {
		res.Adversarial = c.recall()
	}
	res.Latency = latency(times)
	return res, nil
}

// firstHit returns the rank (0-based) of the first hit that is an evidence
// turn, and of the first hit in an evidence session; -1 when none is.
func firstHit(hits, evidence []string) (turnAt, sessionAt int) {
	turnAt, sessionAt = -1, -1
	sessions := map[int]bool{}
	for _, e := range evidence {
		if s := sessionOf(e); s >= 0 {
			sessions[s] = true
		}
	}
	for i, h := range hits {
		if h == "" {
			continue
		}
		if turnAt < 0 && slices.Contains(evidence, h) {
			turnAt = i
		}
		if sessionAt < 0 && sessions[sessionOf(h)] {
			sessionAt = i
		}
	}
	return turnAt, sessionAt
}

// latency returns nearest-rank percentiles of times in milliseconds.
func latency(times []time.Duration) Latency {
	return Latency{P50: ms(harness.Percentile(times, 50)), P95: ms(harness.Percentile(times, 95)), Max: ms(harness.Percentile(times, 100))}
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
