package daemon

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memminer/memminer/internal/bearer"
	"github.com/memminer/memminer/internal/listenaddr"
	"github.com/memminer/memminer/service/api"
)

// metrics are the daemon's Prometheus series. They are written in the
// Prometheus text format by the daemon itself: the client library's
// dependencies (protobuf among them) would be initialised by every
// memminer command at start-up, for the one that serves metrics.
type metrics struct {
	mines         *counterVec
	mineSeconds   *histogram
	mineFailures  *counterVec
	searchSeconds *histogram
	// rememberSeconds is the latency of remember requests: the write and
	// its mine.
	rememberSeconds *histogram
	watchErrors     *counterVec
	// recent counts mines, searches and remembers minute by minute.
	recent timeline
	// gauges are read at scrape time.
	gauges []gauge
	// scrapeMu makes scrapes take turns; replication is what Syncthing
	// said during the current one.
	scrapeMu    sync.Mutex
	scrapeTurn  sync.Mutex
	replication *api.Replication
}

// Bucket bounds: round numbers, 1-2.5-5 per decade.
var (
	mineBuckets   = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	searchBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

func newMetrics(d *Daemon) *metrics {
	m := &metrics{
		mines: newCounterVec("memminer_mines_total",
			"Mines run by the daemon, by trigger (start, tick, watch, overflow, request) and result (ok, error).", "trigger", "result"),
		mineSeconds: newHistogram("memminer_mine_duration_seconds",
			"Duration of one mine (one agent, or one handed-over request).", mineBuckets),
		mineFailures: newCounterVec("memminer_mine_failures_total",
			"Files that failed to mine, counted at every failed attempt."),
		searchSeconds: newHistogram("memminer_search_duration_seconds",
			"Latency of searches served over the control socket.", searchBuckets),
		rememberSeconds: newHistogram("memminer_remember_duration_seconds",
			"Latency of remember requests served over the control socket: the write and its mine.", mineBuckets),
		watchErrors: newCounterVec("memminer_watch_errors_total",
			"fsnotify errors and queue overflows, each answered by a rescan of the hive."),
	}
	m.gauges = []gauge{
		{"memminer_notes", "Notes in the palace, by wing.", "wing", func() []sample {
			var out []sample
			for _, w := range d.p.Wings() {
				out = append(out, sample{label: w.ID, value: float64(w.Notes)})
			}
			return out
		}},
		{"memminer_conflicts_open", "Open Syncthing conflict copies in the hive.", "", func() []sample {
			return []sample{{value: float64(d.conflictsOpen(context.Background()))}}
		}},
		{"memminer_files_failing", "Files whose last mine failed, and wings whose re-embedding failed.", "", func() []sample {
			return []sample{{value: float64(d.failures.len() + d.reembedFailures.len())}}
		}},
		{"memminer_pending_wings", "Agents waiting to be mined, including those in their debounce window.", "", func() []sample {
			return []sample{{value: float64(len(d.activity().agents()))}}
		}},
		{"go_goroutines", "Number of goroutines that currently exist.", "", func() []sample {
			return []sample{{value: float64(runtime.NumGoroutine())}}
		}},
		{"go_memstats_heap_alloc_bytes", "Bytes of allocated heap objects.", "", func() []sample {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return []sample{{value: float64(ms.HeapAlloc)}}
		}},
		{"process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.", "", func() []sample {
			return []sample{{value: float64(d.started.UnixNano()) / 1e9}}
		}},
	}
	m.gauges = append(m.gauges, m.syncthingGauges(d)...)
	m.gauges = append(m.gauges, processGauges()...)
	return m
}

// syncthingGauges describe how the hive's Syncthing folder replicates,
// asked of Syncthing once per scrape. Without Syncthing followed there are
// no series, rather than a 0 that looks like an outage.
func (m *metrics) syncthingGauges(d *Daemon) []gauge {
	replication := func() *api.Replication {
		m.scrapeMu.Lock()
		defer m.scrapeMu.Unlock()
		if m.replication == nil {
			m.replication = HiveReplication(context.Background(), d.opts.Syncthing, d.opts.Hive)
		}
		return m.replication
	}
	value := func(f func(*api.Replication) float64) func() []sample {
		return func() []sample {
			if d.opts.Syncthing == nil {
				return nil
			}
			r := replication()
			if r == nil || r.Error != nil {
				return nil
			}
			return []sample{{value: f(r)}}
		}
	}
	return []gauge{
		{"memminer_syncthing_up", "1 when Syncthing answers and a folder of it holds the hive, else 0.", "", func() []sample {
			if d.opts.Syncthing == nil {
				return nil
			}
			if r := replication(); r == nil || r.Error != nil {
				return []sample{{value: 0}}
			}
			return []sample{{value: 1}}
		}},
		{"memminer_syncthing_need_files", "Files of the hive's Syncthing folder this machine still has to fetch.", "",
			value(func(r *api.Replication) float64 { return float64(r.NeedFiles) })},
		{"memminer_syncthing_need_bytes", "Bytes of the hive's Syncthing folder this machine still has to fetch.", "",
			value(func(r *api.Replication) float64 { return float64(r.NeedBytes) })},
		{"memminer_syncthing_devices_connected", "Other devices sharing the hive's Syncthing folder that are connected now.", "",
			value(func(r *api.Replication) float64 { return float64(r.DevicesConnected) })},
		{"memminer_syncthing_state_known", "1 when this machine can know how the hive's folder stands (a device sharing it is connected, or none shares it), 0 when it is cut off from all of them.", "",
			value(func(r *api.Replication) float64 { return boolGauge(r.StateKnown) })},
		{"memminer_syncthing_isolated_seconds", "Seconds since a device sharing the hive's folder was last connected; 0 while one is.", "",
			value(func(r *api.Replication) float64 {
				if r.IsolatedSeconds == nil {
					return 0
				}
				return float64(*r.IsolatedSeconds)
			})},
		{"memminer_syncthing_device_completion_percent", "How much of the hive's folder each other device has, as Syncthing here last heard.", "device", func() []sample {
			if d.opts.Syncthing == nil {
				return nil
			}
			r := replication()
			if r == nil || r.Error != nil {
				return nil
			}
			var out []sample
			for _, dev := range r.Devices {
				if dev.Completion != nil {
					out = append(out, sample{label: dev.Name, value: *dev.Completion})
				}
			}
			return out
		}},
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (m *metrics) observeMine(trigger string, dur time.Duration, err error, failedFiles int) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.mines.add(1, trigger, result)
	m.mineSeconds.observe(dur.Seconds())
	m.mineFailures.add(float64(failedFiles))
	m.recent.add(time.Now(), countMine)
}

// observeSearch counts a search served over the control socket.
func (m *metrics) observeSearch(dur time.Duration) {
	m.searchSeconds.observe(dur.Seconds())
	m.recent.add(time.Now(), countSearch)
}

// observeRemember counts a remember request, which is a mine too.
func (m *metrics) observeRemember(dur time.Duration, err error) {
	m.observeMine(triggerRequest, dur, err, 0)
	m.rememberSeconds.observe(dur.Seconds())
	m.recent.add(time.Now(), countRemember)
}

// write writes every series in the Prometheus text format (version 0.0.4).
func (m *metrics) write(w io.Writer) error {
	m.scrapeTurn.Lock()
	defer m.scrapeTurn.Unlock()
	defer func() {
		m.scrapeMu.Lock()
		m.replication = nil
		m.scrapeMu.Unlock()
	}()
	var b strings.Builder
	m.mines.write(&b)
	m.mineSeconds.write(&b)
	m.mineFailures.write(&b)
	m.searchSeconds.write(&b)
	m.rememberSeconds.write(&b)
	m.watchErrors.write(&b)
	for _, g := range m.gauges {
		g.write(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// handler serves the metrics on MetricsAddr; with a token, only to
// requests that carry it (Options.MetricsToken).
func (m *metrics) handler(token string) http.Handler {
	mux := http.NewServeMux()
	var serve http.Handler = http.HandlerFunc(m.serve)
	if token != "" {
		serve = bearer.Require(token, serve)
	}
	mux.Handle("/metrics", serve)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "memminer metrics: /metrics")
	})
	return mux
}

// serve writes the exposition.
func (m *metrics) serve(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_ = m.write(w)
}

// counterVec is a counter, with labels or without.
type counterVec struct {
	name, help string
	labels     []string
	mu         sync.Mutex
	values     map[string]float64 // by the label values joined with \x00
}

func newCounterVec(name, help string, labels ...string) *counterVec {
	c := &counterVec{name: name, help: help, labels: labels, values: map[string]float64{}}
	if len(labels) == 0 {
		c.values[""] = 0 // a plain counter is shown from the start
	}
	return c
}

func (c *counterVec) add(v float64, labelValues ...string) {
	c.mu.Lock()
	c.values[strings.Join(labelValues, "\x00")] += v
	c.mu.Unlock()
}

func (c *counterVec) inc() { c.add(1) }

func (c *counterVec) write(b *strings.Builder) {
	header(b, c.name, c.help, "counter")
	c.mu.Lock()
	keys := make([]string, 0, len(c.values))
	for k := range c.values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var pairs [][2]string
		if len(c.labels) > 0 {
			for i, v := range strings.Split(k, "\x00") {
				pairs = append(pairs, [2]string{c.labels[i], v})
			}
		}
		line(b, c.name, pairs, c.values[k])
	}
	c.mu.Unlock()
}

// histogram counts observations into cumulative buckets.
type histogram struct {
	name, help string
	bounds     []float64
	mu         sync.Mutex
	counts     []uint64 // per bucket, not cumulative; the last is +Inf
	sum        float64
	count      uint64
}

func newHistogram(name, help string, bounds []float64) *histogram {
	return &histogram{name: name, help: help, bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v) // the first bound ≥ v
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.count++
	h.mu.Unlock()
}

func (h *histogram) write(b *strings.Builder) {
	header(b, h.name, h.help, "histogram")
	h.mu.Lock()
	defer h.mu.Unlock()
	var cum uint64
	for i, n := range h.counts {
		cum += n
		le := "+Inf"
		if i < len(h.bounds) {
			le = formatFloat(h.bounds[i])
		}
		line(b, h.name+"_bucket", [][2]string{{"le", le}}, float64(cum))
	}
	line(b, h.name+"_sum", nil, h.sum)
	line(b, h.name+"_count", nil, float64(h.count))
}

// gauge is read when metrics are scraped; label names its one label, if any.
type gauge struct {
	name, help, label string
	read              func() []sample
}

type sample struct {
	label string
	value float64
}

func (g gauge) write(b *strings.Builder) {
	samples := g.read()
	if samples == nil {
		return
	}
	header(b, g.name, g.help, "gauge")
	slices.SortFunc(samples, func(x, y sample) int { return strings.Compare(x.label, y.label) })
	for _, s := range samples {
		var pairs [][2]string
		if g.label != "" {
			pairs = [][2]string{{g.label, s.label}}
		}
		line(b, g.name, pairs, s.value)
	}
}

func header(b *strings.Builder, name, help, kind string) {
	help = strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(help)
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, kind)
}

// line writes one sample; labels are sorted by name, as Prometheus does.
func line(b *strings.Builder, name string, labels [][2]string, v float64) {
	b.WriteString(name)
	if len(labels) > 0 {
		slices.SortFunc(labels, func(x, y [2]string) int { return strings.Compare(x[0], y[0]) })
		b.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(l[0])
			b.WriteString(`="`)
			b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(l[1]))
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(formatFloat(v))
	b.WriteByte('\n')
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// CheckMetricsAddr refuses an address other machines could reach unless
// allowRemote (the error then matches listenaddr.ErrRemote): metrics name
// the wings, which is the hive's membership.
func CheckMetricsAddr(addr string, allowRemote bool) error {
	return listenaddr.Check("metrics", addr, "127.0.0.1:9464", allowRemote)
}
