package main

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/memminer/memminer/bench/hivegen"
	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

// Config describes one scale run.
type Config struct {
	// Sizes are the hive sizes in notes; each gets max(1, size/1000) agents.
	Sizes []int
	// Model is the embedding model spec ("lexical", "use-lite", …), given
	// to memminer processes and recorded in the results.
	Model string
	// Embedder is Model opened, for the measurements made in process; nil
	// for a lexical model.
	Embedder embed.Embedder
	// Bin is a memminer binary. When set, the mine, whole-process searches
	// and wake-ups, and the daemon are real processes (with their peak
	// memory); when empty everything runs in this process and no memory
	// figures are taken.
	Bin string
	// Env is the environment of memminer processes (model cache, …); the
	// palace path and model are added per run.
	Env []string
	// Dir is a scratch directory; each size gets its own hive and palace.
	Dir string
	// Queries is how many searches are timed per path (cycling Questions).
	Queries int
	// Runs is how many times each whole-process command is timed.
	Runs int
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// Latency summarises durations in milliseconds.
type Latency struct {
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
}

// Proc is a whole-process measurement: median wall time over the runs and
// the largest peak resident set of any run.
type Proc struct {
	Runs      int     `json:"runs"`
	MedianMs  float64 `json:"median_ms"`
	PeakRSSMB float64 `json:"peak_rss_mib"`
}

// Row is everything measured at one size.
type Row struct {
	Notes  int    `json:"notes"`
	Agents int    `json:"agents"`
	Model  string `json:"model"`
	// MineSeconds is the cold mine of the whole hive into an empty palace.
	MineSeconds    float64 `json:"mine_seconds"`
	NotesPerSecond float64 `json:"mine_notes_per_second"`
	// MinePeakRSSMB is the mine process's peak resident set (0 in process).
	MinePeakRSSMB float64 `json:"mine_peak_rss_mib"`
	PalaceBytes   int64   `json:"palace_bytes"`
	// OpenMs is palace.Open of the whole palace, read-only, median of 3.
	OpenMs float64 `json:"open_ms"`
	// SearchAll and SearchWing are palace.Search in an open palace, over
	// every wing and over one wing.
	SearchAll  Latency `json:"search_all_wings"`
	SearchWing Latency `json:"search_one_wing"`
	// SearchDaemon is a search over every wing through the daemon's socket.
	SearchDaemon Latency `json:"search_daemon"`
	// WakeUpMs is wakeup.Build in an open palace, median of 3;
	// WakeUpDaemonMs the same through the socket.
	WakeUpMs       float64 `json:"wakeup_ms"`
	WakeUpDaemonMs float64 `json:"wakeup_daemon_ms"`
	// Whole processes (zero without a binary).
	SearchProc       Proc    `json:"search_process_direct"`
	SearchProcDaemon Proc    `json:"search_process_daemon"`
	WakeUpProc       Proc    `json:"wakeup_process_direct"`
	DaemonRSSMB      float64 `json:"daemon_rss_mib"`
	DaemonPeakRSSMB  float64 `json:"daemon_peak_rss_mib"`
}

// Questions are the searches timed: the kind an agent asks of a hive like
// the generated one.
var Questions = []string{
	"db-2 failover runbook",
	"what does pgbouncer depend on",
	"who owns the rate-limiter",
	"why was the staging-db moved to terraform",
	"payment-sandbox fails when",
	"how is the build-cache configured",
	"which alerts go through pagerduty",
	"wal-archive since the last migration",
	"electron-vite release-branch decision",
	"never change the tls-certs by hand",
	"queue-worker is cached by redis",
	"dark mode date-picker",
	"what runs on kubernetes in us-east-1",
	"search-index rebuilt nightly",
	"metrics-exporter grafana",
	"migration-42 incident review",
}

// Measure runs every size in turn.
func Measure(ctx context.Context, cfg Config) ([]Row, error) {
	if cfg.Queries <= 0 {
		cfg.Queries = len(Questions)
	}
	if cfg.Runs <= 0 {
		cfg.Runs = 5
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	var rows []Row
	for _, n := range cfg.Sizes {
		if n <= 0 {
			return rows, fmt.Errorf("size %d: want a positive number of notes", n)
		}
		r, err := measureSize(ctx, cfg, n)
		if err != nil {
			return rows, fmt.Errorf("%d notes: %w", n, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func measureSize(ctx context.Context, cfg Config, n int) (Row, error) {
	log := cfg.Logger.With("notes", n)
	dir := filepath.Join(cfg.Dir, fmt.Sprintf("n%d", n))
	hive, pal := filepath.Join(dir, "hive"), filepath.Join(dir, "palace")
	defer os.RemoveAll(dir)
	ids, err := hivegen.Write(hive, hivegen.Options{Notes: n})
	if err != nil {
		return Row{}, fmt.Errorf("generate hive: %w", err)
	}
	r := Row{Notes: n, Agents: len(ids), Model: cfg.Model}
	env := harness.Env(cfg.Env, pal, cfg.Model)

	log.Info("cold mine")
	if cfg.Bin != "" {
		p, err := runProc(ctx, cfg.Bin, env, "mine", hive, "--no-daemon")
		if err != nil {
			return r, err
		}
		r.MineSeconds, r.MinePeakRSSMB = p.wall.Seconds(), mib(p.maxRSS)
	} else {
		d, err := mineInProcess(ctx, pal, hive, cfg.Embedder)
		if err != nil {
			return r, err
		}
		r.MineSeconds = d.Seconds()
	}
	r.NotesPerSecond = float64(n) / r.MineSeconds
	r.PalaceBytes = dirBytes(pal)

	log.Info("open and search in process")
	var p *palace.Palace
	opens, err := harness.Time(3, func() (err error) {
		p, err = palace.Open(ctx, pal, palace.Options{Embedder: cfg.Embedder, ReadOnly: true, Logger: cfg.Logger})
		return err
	})
	if err != nil {
		return r, fmt.Errorf("open palace: %w", err)
	}
	r.OpenMs = median(opens)
	all, one := make([]time.Duration, 0, cfg.Queries), make([]time.Duration, 0, cfg.Queries)
	for i := range cfg.Queries {
		q := Questions[i%len(Questions)]
		t0 := time.Now()
		if _, err := p.Search(ctx, q, palace.SearchOptions{Results: 10}); err != nil {
			return r, fmt.Errorf("search: %w", err)
		}
		all = append(all, time.Since(t0))
		t0 = time.Now()
		if _, err := p.Search(ctx, q, palace.SearchOptions{Results: 10, Wings: ids[:1]}); err != nil {
			return r, fmt.Errorf("search: %w", err)
		}
		one = append(one, time.Since(t0))
	}
	r.SearchAll, r.SearchWing = latency(all), latency(one)
	wakes, err := harness.Time(3, func() error { _, err := wakeup.Build(p, wakeup.Options{}); return err })
	if err != nil {
		return r, fmt.Errorf("wake-up: %w", err)
	}
	r.WakeUpMs = median(wakes)
	p = nil // let the read-only palace go before the processes run

	if cfg.Bin != "" {
		log.Info("whole-process search and wake-up, direct")
		if r.SearchProc, err = repeat(ctx, cfg, env, "--no-daemon", "search", Questions[0]); err != nil {
			return r, err
		}
		if r.WakeUpProc, err = repeat(ctx, cfg, env, "--no-daemon", "wake-up"); err != nil {
			return r, err
		}
	}

	log.Info("through the daemon")
	stop, pid, err := startDaemon(ctx, cfg, env, pal, hive)
	if err != nil {
		return r, err
	}
	defer stop()
	cl := daemonclient.NewClient(pal)
	if _, err := harness.WaitIdle(ctx, cl, 10*time.Minute); err != nil {
		return r, err
	}
	var viaSocket []time.Duration
	for i := range cfg.Queries {
		t0 := time.Now()
		if _, err := cl.Search(ctx, api.SearchRequest{Query: Questions[i%len(Questions)], Results: 10, Model: cfg.Model}); err != nil {
			return r, fmt.Errorf("search through the daemon: %w", err)
		}
		viaSocket = append(viaSocket, time.Since(t0))
	}
	r.SearchDaemon = latency(viaSocket)
	wakes, err = harness.Time(3, func() error { _, err := cl.WakeUp(ctx, wakeup.Options{}); return err })
	if err != nil {
		return r, fmt.Errorf("wake-up through the daemon: %w", err)
	}
	r.WakeUpDaemonMs = median(wakes)
	if cfg.Bin != "" {
		if r.SearchProcDaemon, err = repeat(ctx, cfg, env, "search", Questions[0]); err != nil {
			return r, err
		}
		rss, hwm, err := harness.Memory(pid)
		if err != nil {
			return r, err
		}
		r.DaemonRSSMB, r.DaemonPeakRSSMB = mib(rss), mib(hwm)
	}
	return r, stop()
}

func mineInProcess(ctx context.Context, pal, hive string, e embed.Embedder) (time.Duration, error) {
	t0 := time.Now()
	p, err := harness.Mine(ctx, pal, hive, e)
	if err != nil {
		return 0, err
	}
	d := time.Since(t0)
	return d, p.Close()
}

// startDaemon starts `memminer run` (or, without a binary, a daemon in this
// process) on the mined palace. stop ends it and reports how it ended; it
// may be called more than once. pid is 0 in process.
func startDaemon(ctx context.Context, cfg Config, env []string, pal, hive string) (stop func() error, pid int, err error) {
	if cfg.Bin == "" {
		d, err := daemon.New(ctx, daemon.Options{Palace: pal, Hive: hive, Embedder: cfg.Embedder, ModelSpec: cfg.Model, NoWatch: true, Logger: cfg.Logger})
		if err != nil {
			return nil, 0, fmt.Errorf("start daemon: %w", err)
		}
		dctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- d.Run(dctx) }()
		var res error
		stopped := false
		return func() error {
			if !stopped {
				stopped = true
				cancel()
				res = <-done
			}
			return res
		}, 0, nil
	}
	d, err := harness.StartDaemon(ctx, cfg.Bin, hive, pal, env, nil)
	if err != nil {
		return nil, 0, err
	}
	return d.Stop, d.Pid(), nil
}

// repeat times cfg.Runs runs of one memminer command.
func repeat(ctx context.Context, cfg Config, env []string, args ...string) (Proc, error) {
	var walls []time.Duration
	var peak int64
	for range cfg.Runs {
		p, err := runProc(ctx, cfg.Bin, env, args...)
		if err != nil {
			return Proc{}, err
		}
		walls = append(walls, p.wall)
		peak = max(peak, p.maxRSS)
	}
	return Proc{Runs: cfg.Runs, MedianMs: median(walls), PeakRSSMB: mib(peak)}, nil
}

func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// latency is the nearest-rank p50 and p95 of ds.
func latency(ds []time.Duration) Latency {
	return Latency{P50: ms(harness.Percentile(ds, 50)), P95: ms(harness.Percentile(ds, 95))}
}

// median is the nearest-rank median of ds in milliseconds.
func median(ds []time.Duration) float64 { return ms(harness.Percentile(ds, 50)) }

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 1e2 }

func mib(b int64) float64 { return math.Round(float64(b)/(1<<20)*10) / 10 }
