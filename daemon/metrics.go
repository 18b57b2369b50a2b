package daemon

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/memminer/memminer/internal/listenaddr"
)

// metrics are the daemon's Prometheus series, in a registry of their own.
type metrics struct {
	reg           *prometheus.Registry
	mines         *prometheus.CounterVec
	mineSeconds   prometheus.Histogram
	mineFailures  prometheus.Counter
	searchSeconds prometheus.Histogram
	watchErrors   prometheus.Counter
}

func newMetrics(d *Daemon) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		mines: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memminer_mines_total",
			Help: "Mines run by the daemon, by trigger (start, tick, watch, overflow, request) and result (ok, error).",
		}, []string{"trigger", "result"}),
		mineSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "memminer_mine_duration_seconds",
			Help:    "Duration of one mine (one agent, or one handed-over request).",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}),
		mineFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "memminer_mine_failures_total",
			Help: "Files that failed to mine, counted at every failed attempt.",
		}),
		searchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "memminer_search_duration_seconds",
			Help:    "Latency of searches served over the control socket.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 3, 10),
		}),
		watchErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "memminer_watch_errors_total",
			Help: "fsnotify errors and queue overflows, each answered by a rescan of the hive.",
		}),
	}
	notes := prometheus.NewDesc("memminer_notes", "Notes in the palace, by wing.", []string{"wing"}, nil)
	stUp := prometheus.NewDesc("memminer_syncthing_up", "1 when Syncthing answers and a folder of it holds the hive, else 0.", nil, nil)
	stNeedFiles := prometheus.NewDesc("memminer_syncthing_need_files", "Files of the hive's Syncthing folder this machine still has to fetch.", nil, nil)
	stNeedBytes := prometheus.NewDesc("memminer_syncthing_need_bytes", "Bytes of the hive's Syncthing folder this machine still has to fetch.", nil, nil)
	stConnected := prometheus.NewDesc("memminer_syncthing_devices_connected", "Other devices sharing the hive's Syncthing folder that are connected now.", nil, nil)
	m.reg.MustRegister(
		m.mines, m.mineSeconds, m.mineFailures, m.searchSeconds, m.watchErrors,
		collectorFunc{descs: []*prometheus.Desc{notes}, collect: func(ch chan<- prometheus.Metric) {
			for _, w := range d.p.Wings() {
				ch <- prometheus.MustNewConstMetric(notes, prometheus.GaugeValue, float64(w.Notes), w.ID)
			}
		}},
		collectorFunc{descs: []*prometheus.Desc{stUp, stNeedFiles, stNeedBytes, stConnected}, collect: func(ch chan<- prometheus.Metric) {
			if d.opts.Syncthing == nil {
				return // not followed: no series rather than a 0 that looks like an outage
			}
			r := HiveReplication(context.Background(), d.opts.Syncthing, d.opts.Hive)
			if r == nil || r.Error != "" {
				ch <- prometheus.MustNewConstMetric(stUp, prometheus.GaugeValue, 0)
				return
			}
			ch <- prometheus.MustNewConstMetric(stUp, prometheus.GaugeValue, 1)
			ch <- prometheus.MustNewConstMetric(stNeedFiles, prometheus.GaugeValue, float64(r.NeedFiles))
			ch <- prometheus.MustNewConstMetric(stNeedBytes, prometheus.GaugeValue, float64(r.NeedBytes))
			ch <- prometheus.MustNewConstMetric(stConnected, prometheus.GaugeValue, float64(r.DevicesConnected))
		}},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "memminer_conflicts_open",
			Help: "Open Syncthing conflict copies in the hive.",
		}, func() float64 { return float64(d.conflictsOpen()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "memminer_files_failing",
			Help: "Files whose last mine failed, and wings whose re-embedding failed.",
		}, func() float64 { return float64(d.failures.len() + d.reembedFailures.len()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "memminer_pending_wings",
			Help: "Agents waiting to be mined, including those in their debounce window.",
		}, func() float64 {
			dirs, _, _ := d.q.pending()
			d.mu.Lock()
			defer d.mu.Unlock()
			n := len(d.debouncing)
			for _, dir := range dirs {
				if !d.debouncing[dir] {
					n++
				}
			}
			return float64(n)
		}),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

func (m *metrics) observeMine(trigger string, dur time.Duration, err error, failedFiles int) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.mines.WithLabelValues(trigger, result).Inc()
	m.mineSeconds.Observe(dur.Seconds())
	m.mineFailures.Add(float64(failedFiles))
}

func (m *metrics) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "memminer metrics: /metrics")
	})
	return mux
}

// collectorFunc is a collector of fixed descriptions whose values are read
// at scrape time.
type collectorFunc struct {
	descs   []*prometheus.Desc
	collect func(chan<- prometheus.Metric)
}

func (c collectorFunc) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}
func (c collectorFunc) Collect(ch chan<- prometheus.Metric) { c.collect(ch) }

// checkMetricsAddr refuses an address other machines could reach unless
// allowRemote: metrics name the wings, which is the hive's membership.
func checkMetricsAddr(addr string, allowRemote bool) error {
	return listenaddr.Check("metrics", addr, "127.0.0.1:9464", allowRemote, "metrics-allow-remote")
}
