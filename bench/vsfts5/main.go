// Command vsfts5 measures memminer against SQLite FTS5 on the same notes,
// whole process against whole process, paired in one run: each round runs
// every query through both, so both see the same load. It prints the
// ratios of issue 27's targets table.
//
//	go build -o /tmp/memminer ./cmd/memminer
//	go run ./bench/vsfts5 -memminer /tmp/memminer -notes 100000
//	go run ./bench/vsfts5 -memminer /tmp/memminer -notes 10000 -model use-lite
//
// The baseline is a table of the same notes (wing, heading, text) made
// with the Debian sqlite3 shell, `fts5(..., tokenize='porter unicode61')`,
// queried with the query's words OR-ed and ranked by bm25(), as memminer's
// BM25 matches any query term. Times are CPU (user+sys of the process,
// from its rusage), which the machine's other load changes least, and
// wall; medians over the rounds.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/memminer/memminer/bench/hivegen"
	"github.com/memminer/memminer/bench/internal/harness"
)

// queries are words of the generated hives (bench/hivegen), without
// stopwords: memminer drops those, FTS5 does not, so both get the same
// words to look up.
var queries = []string{
	"pgbouncer depends vault",
	"rebuilt nightly job",
	"staging-db backup port-5432",
	"owns rate-limiter",
	"grafana alerts gateway",
}

func main() {
	t := harness.CommandLine(0, 100000)
	rounds := flag.Int("rounds", 10, "rounds: each runs every query through memminer and FTS5")
	appends := flag.Int("appends", 10, "notes appended one at a time, each mined by memminer and inserted into FTS5")
	withDaemon := flag.Bool("daemon", true, "also measure search through a running daemon")
	keep := flag.String("dir", "", "work in this directory and keep it (default: a temporary one, removed)")
	flag.Parse()
	if err := t.Check(); err != nil {
		fmt.Fprintln(os.Stderr, "vsfts5:", err)
		os.Exit(2)
	}
	if err := run(t.Bin, t.Notes, t.Model, *rounds, *appends, *withDaemon, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "vsfts5:", err)
		os.Exit(1)
	}
}

// sample is one finished process.
type sample struct{ cpu, wall time.Duration }

// series collects the samples of one measure.
type series []sample

func (s series) median(f func(sample) time.Duration) time.Duration {
	v := make([]time.Duration, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	return harness.SpreadOf(v).Median
}

func (s series) cpu() time.Duration  { return s.median(func(x sample) time.Duration { return x.cpu }) }
func (s series) wall() time.Duration { return s.median(func(x sample) time.Duration { return x.wall }) }

// proc runs name with args and env; stdin, when not empty, is its input.
// Exit code 1 is no failure when allow1 is set (search exits 1 when
// nothing matches).
func proc(env []string, stdin string, allow1 bool, name string, args ...string) (sample, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 && allow1 {
		err = nil
	}
	if err != nil {
		return sample{}, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return sample{cpu: harness.CPU(cmd.ProcessState), wall: wall}, nil
}

func run(bin string, notes int, model string, rounds, appends int, withDaemon bool, keep string) error {
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		return fmt.Errorf("the baseline needs the sqlite3 shell (Debian: apt-get install sqlite3): %w", err)
	}
	dir := keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "mm-vsfts5-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	hive, pal, db := filepath.Join(dir, "hive"), filepath.Join(dir, "palace"), filepath.Join(dir, "fts5.db")
	env := harness.Env(os.Environ(), pal, model)
	mm := func(args ...string) (sample, error) { return proc(env, "", true, bin, args...) }
	if _, err := os.Stat(hive); err != nil {
		if _, err := hivegen.Write(hive, hivegen.Options{Notes: notes}); err != nil {
			return err
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("hive: %d notes; model %s; load average %s\n", notes, model, strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))

	cold, err := mm("mine", hive)
	if err != nil {
		return err
	}
	fmt.Printf("cold mine: %.2f s CPU, %.2f s wall: %.0f notes per CPU-second\n", cold.cpu.Seconds(), cold.wall.Seconds(), float64(notes)/cold.cpu.Seconds())
	sql, err := ftsSQL(hive)
	if err != nil {
		return err
	}
	_ = os.Remove(db)
	build, err := proc(env, sql, false, sqlite, db)
	if err != nil {
		return err
	}
	fmt.Printf("FTS5 build: %.2f s CPU, %.2f s wall\n\n", build.cpu.Seconds(), build.wall.Seconds())

	ftsQuery := func(q string) (sample, error) {
		return proc(env, "", false, sqlite, db, "SELECT wing, text FROM notes WHERE notes MATCH '"+ftsMatch(q)+"' ORDER BY bm25(notes) LIMIT 5")
	}
	var direct, fts series
	for range rounds {
		for _, q := range queries {
			s, err := mm("--no-daemon", "search", q)
			if err != nil {
				return err
			}
			direct = append(direct, s)
			if s, err = ftsQuery(q); err != nil {
				return err
			}
			fts = append(fts, s)
		}
	}
	rows := []row{{fmt.Sprintf("%d notes, %s, `search --no-daemon`", notes, model), direct, fts}}

	// Appending one note: memminer mines the hive (only that file changed),
	// FTS5 inserts the note.
	var mine, insert series
	file := filepath.Join(hive, "agents", "agent-000", "memory.md")
	for i := range appends {
		text := fmt.Sprintf("- Appended note %d: the canary-%d deploy runs on node-20.", i, i)
		if err := harness.AppendFile(file, text+"\n"); err != nil {
			return err
		}
		s, err := mm("mine", hive)
		if err != nil {
			return err
		}
		mine = append(mine, s)
		s, err = proc(env, "", false, sqlite, db, "INSERT INTO notes VALUES('agent-000', 'Appended', '"+text+"')")
		if err != nil {
			return err
		}
		insert = append(insert, s)
	}
	rows = append(rows, row{fmt.Sprintf("%d notes, `mine` after one appended note (vs one `INSERT`)", notes), mine, insert})

	if withDaemon {
		viaDaemon, ftsD, err := daemonRounds(env, bin, hive, pal, rounds, ftsQuery)
		if err != nil {
			return err
		}
		rows = append(rows, row{fmt.Sprintf("%d notes, %s, `search` through the daemon", notes, model), viaDaemon, ftsD})
	}
	printRows(rows)
	return nil
}

// daemonRounds starts `memminer run`, waits for it to be idle, and runs the
// search rounds through it, paired with FTS5.
func daemonRounds(env []string, bin, hive, pal string, rounds int, ftsQuery func(string) (sample, error)) (series, series, error) {
	ctx := context.Background()
	d, err := harness.StartDaemon(ctx, bin, hive, pal, env, nil)
	if err != nil {
		return nil, nil, err
	}
	defer d.Stop()
	if _, err := d.WaitIdle(ctx, 10*time.Minute); err != nil {
		return nil, nil, err
	}
	var mm, fts series
	for range rounds {
		for _, q := range queries {
			s, err := proc(env, "", true, bin, "search", q)
			if err != nil {
				return nil, nil, err
			}
			mm = append(mm, s)
			if s, err = ftsQuery(q); err != nil {
				return nil, nil, err
			}
			fts = append(fts, s)
		}
	}
	return mm, fts, nil
}

type row struct {
	what      string
	mm, other series
}

func printRows(rows []row) {
	harness.Row(os.Stdout, "measure", "memminer CPU (wall)", "FTS5 CPU (wall)", "ratio, CPU (wall)")
	harness.Rule(os.Stdout, 4)
	for _, r := range rows {
		harness.Row(os.Stdout, r.what, ms(r.mm.cpu())+" ("+ms(r.mm.wall())+")", ms(r.other.cpu())+" ("+ms(r.other.wall())+")",
			fmt.Sprintf("%.1f× (%.1f×)", r.mm.cpu().Seconds()/r.other.cpu().Seconds(), r.mm.wall().Seconds()/r.other.wall().Seconds()))
	}
	fmt.Println("\nmedians over every run of each measure; CPU is user+sys of the whole process")
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// ftsSQL makes the baseline's table of the hive's notes: each bullet of
// each agent's memory.md with its wing and its section's heading.
func ftsSQL(hive string) (string, error) {
	var b strings.Builder
	b.WriteString("CREATE VIRTUAL TABLE notes USING fts5(wing UNINDEXED, heading, text, tokenize='porter unicode61');\nBEGIN;\n")
	files, err := filepath.Glob(filepath.Join(hive, "agents", "*", "memory.md"))
	if err != nil {
		return "", err
	}
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	for _, f := range files {
		wing := filepath.Base(filepath.Dir(f))
		fh, err := os.Open(f)
		if err != nil {
			return "", err
		}
		heading := ""
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "#"):
				heading = strings.TrimLeft(line, "# ")
			case strings.HasPrefix(line, "- "):
				fmt.Fprintf(&b, "INSERT INTO notes VALUES(%s, %s, %s);\n", quote(wing), quote(heading), quote(line))
			}
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return "", err
		}
	}
	b.WriteString("COMMIT;\n")
	return b.String(), nil
}

// ftsMatch is the FTS5 query of q: its words, each quoted, OR-ed.
func ftsMatch(q string) string {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range words {
		words[i] = `"` + w + `"`
	}
	return strings.Join(words, " OR ")
}
