// Command chaos attacks memminer the way a crashing machine would: it
// generates a hive, changes part of it, starts `memminer mine` or
// `memminer run` and kills it with SIGKILL at a random moment, N times.
// After each kill it checks that status and search still answer, that a
// recovery mine leaves the palace equal to a clean mine of the same hive
// (same sources, notes and vectors as a reference palace that is never
// killed) and that no temporary file is left. It prints attempts,
// failures, panics, hangs and notes lost.
//
//	go build -o /tmp/memminer ./cmd/memminer
//	go run ./bench/chaos -memminer /tmp/memminer -n 100 -model lexical
//	go run ./bench/chaos -memminer /tmp/memminer -n 100 -model use-lite
//
// Everything lives in a temporary directory, removed afterwards (-keep
// leaves it). The model cache is the user's, so a fetched built-in model
// is found. Not part of `go test`: see BENCHMARKS.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/memminer/memminer/bench/hivegen"
	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/palace"
)

// hangAfter is how long a check may take before it counts as a hang.
const hangAfter = 2 * time.Minute

type options struct {
	harness.Target
	n              int
	seed           uint64
	keep, verbose  bool
	freshEvery     float64
	changeFraction float64
}

func main() {
	var o options
	o.Flags(flag.CommandLine, 12, 3000)
	flag.IntVar(&o.n, "n", 100, "kills")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the hive, the changes and the kill moments")
	flag.Float64Var(&o.freshEvery, "fresh", 0.15, "share of attempts that start from no palace at all")
	flag.Float64Var(&o.changeFraction, "change", 0.3, "share of memory files changed before each attempt")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory")
	flag.BoolVar(&o.verbose, "v", false, "log every attempt")
	o.ParseFlags()
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

// result counts what the attempts found.
type result struct {
	Attempts    int            `json:"attempts"`
	ByKind      map[string]int `json:"by_kind"`
	Killed      int            `json:"killed"`
	Failures    int            `json:"failures"`
	Panics      int            `json:"panics"`
	Hangs       int            `json:"hangs"`
	NotesLost   int            `json:"notes_lost"`
	TempsLeft   int            `json:"temp_files_left"`
	Seconds     float64        `json:"seconds"`
	FailureList []string       `json:"failure_list,omitempty"`
}

// attack is the state of one chaos run.
type attack struct {
	o       options
	rng     *rand.Rand
	tmp     string
	hive    string
	palace  string
	ref     string
	env     []string
	window  time.Duration // kills land uniformly in [0, window)
	res     result
	attempt int
}

func run(o options) error {
	tmp, err := os.MkdirTemp("", "mm-chaos-")
	if err != nil {
		return err
	}
	if o.keep {
		log.Printf("working in %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	h := &attack{
		o:      o,
		rng:    rand.New(rand.NewPCG(o.seed, 0x6368616f73)),
		tmp:    tmp,
		hive:   filepath.Join(tmp, "hive"),
		palace: filepath.Join(tmp, "palace"),
		ref:    filepath.Join(tmp, "reference"),
		res:    result{ByKind: map[string]int{}},
	}
	// The user's config would change what is mined; the model cache is kept.
	h.env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"))
	if _, err := hivegen.Write(h.hive, hivegen.Options{Notes: o.Notes, Agents: o.Agents, Seed: o.seed}); err != nil {
		return err
	}
	// The first clean mine times the window kills land in.
	start := time.Now()
	if out, err := h.cmd(context.Background(), "mine", h.hive, "--palace", h.ref, "--no-daemon"); err != nil {
		return fmt.Errorf("reference mine: %v\n%s", err, out)
	}
	full := time.Since(start)
	h.window = full + full/5
	log.Printf("chaos: %s model, %d notes in %d agents; a clean mine takes %s; %d kills of mine and run within %s of their start",
		o.Model, o.Notes, o.Agents, full.Round(time.Millisecond), o.n, h.window.Round(time.Millisecond))

	began := time.Now()
	for h.attempt = 1; h.attempt <= o.n; h.attempt++ {
		if err := h.one(); err != nil {
			return err
		}
	}
	h.res.Seconds = time.Since(began).Seconds()
	out, _ := json.MarshalIndent(h.res, "", "  ")
	fmt.Printf("%s\n", out)
	fmt.Printf("chaos %s: %d attempts (%d mine, %d run; %d killed while running, the rest had finished), %d failures, %d panics, %d hangs, %d notes lost, %d temp files left, %.0f s\n",
		o.Model, h.res.Attempts, h.res.ByKind["mine"], h.res.ByKind["run"], h.res.Killed, h.res.Failures, h.res.Panics, h.res.Hangs, h.res.NotesLost, h.res.TempsLeft, h.res.Seconds)
	if h.res.Failures+h.res.Panics+h.res.Hangs > 0 {
		os.Exit(1)
	}
	return nil
}

// one is an attempt: change the hive, bring the reference up to date,
// kill a mine or a daemon at a random moment, then check.
func (h *attack) one() error {
	h.res.Attempts++
	if err := h.change(); err != nil {
		return err
	}
	if out, err := h.cmd(context.Background(), "mine", h.hive, "--palace", h.ref, "--no-daemon"); err != nil {
		return fmt.Errorf("reference mine: %v\n%s", err, out)
	}
	if h.rng.Float64() < h.o.freshEvery {
		if err := os.RemoveAll(h.palace); err != nil {
			return err
		}
	}
	kind := "mine"
	args := []string{"mine", h.hive, "--palace", h.palace, "--no-daemon"}
	if h.rng.IntN(2) == 0 {
		kind = "run"
		args = []string{"run", "--hive", h.hive, "--palace", h.palace, "--mine-interval", "1h"}
	}
	h.res.ByKind[kind]++
	delay := time.Duration(h.rng.Int64N(int64(h.window) + 1))
	victim := exec.Command(h.o.Bin, append(args, "--model", h.o.Model)...)
	victim.Env = h.env
	var stderr bytes.Buffer
	victim.Stderr = &stderr
	if err := victim.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- victim.Wait() }()
	var waitErr error
	select {
	case waitErr = <-exited:
		// Finished before its kill: a mine that must have succeeded.
		if waitErr != nil {
			h.fail("%s exited on its own: %v\n%s", kind, waitErr, stderr.String())
		}
	case <-time.After(delay):
		_ = victim.Process.Signal(syscall.SIGKILL)
		<-exited
		h.res.Killed++
	}
	h.panicked(kind, stderr.String())

	// What a user does next: look, search, mine again.
	if out, ok := h.check("status", 0, "status", "--json", "--palace", h.palace, "--no-daemon"); ok {
		var st struct {
			Palace string `json:"palace"`
		}
		if json.Unmarshal([]byte(out), &st) != nil {
			h.fail("status --json after killing %s: not JSON:\n%s", kind, out)
		}
	}
	h.check("search", 1, "search", "postgres runs on", "--json", "--palace", h.palace, "--no-daemon")
	h.check("recovery mine", 0, "mine", h.hive, "--palace", h.palace, "--no-daemon")
	if n := temps(h.palace); n > 0 {
		h.res.TempsLeft += n
		h.fail("%d temporary files left after the recovery mine (attempt killed %s)", n, kind)
	}
	lost, diffs, err := compare(h.ref, h.palace)
	if err != nil {
		h.fail("compare with the reference: %v", err)
	}
	h.res.NotesLost += lost
	if len(diffs) > 0 {
		h.fail("after killing %s at %s and a recovery mine, the palace differs from a clean mine: %s", kind, delay.Round(time.Millisecond), strings.Join(diffs, "; "))
	}
	if h.o.verbose {
		log.Printf("attempt %d: %s killed after %s; %d failures so far", h.attempt, kind, delay.Round(time.Millisecond), h.res.Failures)
	}
	return nil
}

// check runs a memminer command that must exit with 0 (or up to maxCode)
// within hangAfter, and returns its stdout.
func (h *attack) check(what string, maxCode int, args ...string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), hangAfter)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.o.Bin, append(args, "--model", h.o.Model)...)
	cmd.Env = h.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	h.panicked(what, stderr.String())
	if ctx.Err() != nil {
		h.res.Hangs++
		h.fail("%s hung for %s", what, hangAfter)
		return "", false
	}
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() > maxCode) {
		h.fail("%s: %v\n%s", what, err, stderr.String())
		return "", false
	}
	return stdout.String(), true
}

// cmd runs memminer to completion and returns its combined output.
func (h *attack) cmd(ctx context.Context, args ...string) (string, error) {
	c := exec.CommandContext(ctx, h.o.Bin, append(args, "--model", h.o.Model)...)
	c.Env = h.env
	out, err := c.CombinedOutput()
	return string(out), err
}

func (h *attack) panicked(what, stderr string) {
	if strings.Contains(stderr, "panic:") || strings.Contains(stderr, "fatal error:") {
		h.res.Panics++
		h.fail("%s panicked:\n%s", what, stderr)
	}
}

func (h *attack) fail(format string, args ...any) {
	h.res.Failures++
	msg := fmt.Sprintf("attempt %d: ", h.attempt) + fmt.Sprintf(format, args...)
	if len(h.res.FailureList) < 20 {
		h.res.FailureList = append(h.res.FailureList, msg)
	}
	log.Print(msg)
}

// change rewrites a share of the memory files: some notes dropped, new
// ones (unique to the attempt) appended.
func (h *attack) change() error {
	var files []string
	err := filepath.WalkDir(h.hive, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	n := max(1, int(math.Round(float64(len(files))*h.o.changeFraction)))
	for _, i := range h.rng.Perm(len(files))[:n] {
		data, err := os.ReadFile(files[i])
		if err != nil {
			return err
		}
		lines := strings.SplitAfter(string(data), "\n")
		var b strings.Builder
		for _, l := range lines {
			if strings.HasPrefix(l, "- ") && h.rng.IntN(20) == 0 {
				continue // a note deleted
			}
			b.WriteString(l)
		}
		for k := range 3 {
			fmt.Fprintf(&b, "- Chaos attempt %d added note %d: the %s rotation moved to slot %d.\n", h.attempt, k, []string{"backup", "deploy", "on-call", "cache"}[h.rng.IntN(4)], h.rng.IntN(1000))
		}
		if err := os.WriteFile(files[i], []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// temps counts temporary files of interrupted writes in a palace.
func temps(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && atomicfile.IsTemp(d.Name()) {
			n++
		}
		return nil
	})
	return n
}

// compare reports the notes of the reference palace that got missing, and
// every difference in wings, sources, notes and vectors.
func compare(refDir, gotDir string) (lost int, diffs []string, err error) {
	ctx := context.Background()
	ref, err := palace.Open(ctx, refDir, palace.Options{ReadOnly: true})
	if err != nil {
		return 0, nil, err
	}
	defer ref.Close()
	got, err := palace.Open(ctx, gotDir, palace.Options{ReadOnly: true})
	if err != nil {
		return 0, nil, err
	}
	defer got.Close()
	if d := got.Damaged(); len(d) > 0 {
		diffs = append(diffs, fmt.Sprintf("%d damaged wings", len(d)))
	}
	wings := map[string]bool{}
	for _, w := range ref.Wings() {
		wings[w.ID] = true
	}
	for _, w := range got.Wings() {
		if !wings[w.ID] {
			diffs = append(diffs, "extra wing "+w.ID)
		}
	}
	for id := range wings {
		rs, gs := ref.Sources(id), got.Sources(id)
		if len(rs) != len(gs) {
			diffs = append(diffs, fmt.Sprintf("wing %s: %d sources, want %d", id, len(gs), len(rs)))
		} else {
			for i := range rs {
				if rs[i].Path != gs[i].Path || rs[i].Hash != gs[i].Hash {
					diffs = append(diffs, fmt.Sprintf("wing %s: source %s differs", id, rs[i].Path))
				}
			}
		}
		gotNotes := map[string]palace.Note{}
		for _, n := range got.Notes(id) {
			gotNotes[n.ID] = n
		}
		refNotes := ref.Notes(id)
		for _, n := range refNotes {
			g, ok := gotNotes[n.ID]
			if !ok {
				lost++
				continue
			}
			if g.Text != n.Text || g.Line != n.Line || g.Heading != n.Heading {
				diffs = append(diffs, fmt.Sprintf("wing %s: note %s differs", id, n.ID))
			}
			if !sameVector(ref.Vector(id, n.ID), got.Vector(id, n.ID)) {
				diffs = append(diffs, fmt.Sprintf("wing %s: vector of note %s differs", id, n.ID))
			}
			delete(gotNotes, n.ID)
		}
		if len(gotNotes) > 0 {
			diffs = append(diffs, fmt.Sprintf("wing %s: %d notes a clean mine does not have", id, len(gotNotes)))
		}
	}
	if lost > 0 {
		diffs = append(diffs, fmt.Sprintf("%d notes lost", lost))
	}
	if len(diffs) > 5 {
		diffs = append(diffs[:5], fmt.Sprintf("and %d more", len(diffs)-5))
	}
	return lost, diffs, nil
}

func sameVector(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-6 {
			return false
		}
	}
	return true
}
