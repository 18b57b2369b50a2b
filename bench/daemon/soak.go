package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

// soak runs searches and remembers against the daemon without pause for
// d, two clients at once, and prints the daemon's resident memory every
// sample interval, so what grows shows as a trend rather than a figure.
// With profiles set it saves the daemon's heap profile at the start and
// the end of the soak there (from the control socket's
// /debug/pprof/heap), for `go tool pprof -diff_base start.heap end.heap`.
func soak(ctx context.Context, cl *daemonclient.Client, pid int, pal, hive string, ids []string, model string, d, sample time.Duration, profiles string) error {
	if profiles != "" {
		if err := heapProfile(pal, filepath.Join(profiles, "start.heap")); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var searches, remembers atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	queries := []string{"db-2 failover runbook", "release process", "how is the web bundle built", "postgres backup", "incident on friday", "design review"}
	wg.Add(2)
	go func() { // searcher
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			_, err := cl.Search(ctx, api.SearchRequest{Query: queries[i%len(queries)], Results: 10, Model: model})
			if err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("search: %w", err)
				return
			}
			searches.Add(1)
		}
	}()
	go func() { // rememberer: a new fact, a new word, each time
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			id := ids[(i*13)%len(ids)]
			text := fmt.Sprintf("Soak fact %d: the zqsoak%06d service was moved to host h%d.", i, i, i%97)
			_, err := cl.Remember(ctx, api.RememberRequest{Request: remember.Request{Wing: id, Text: text}, Hive: hive})
			if err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("remember: %w", err)
				return
			}
			remembers.Add(1)
		}
	}()
	fmt.Printf("\nsoak for %s: one client searching, one remembering, without pause\n", d)
	harness.Row(os.Stdout, "t", "VmRSS MiB", "VmHWM MiB", "searches", "remembers")
	harness.Rule(os.Stdout, 5)
	start := time.Now()
	row := func() error {
		rss, hwm, err := harness.Memory(pid)
		if err != nil {
			return err
		}
		harness.Row(os.Stdout, time.Since(start).Round(time.Second).String(), fmt.Sprintf("%.1f", mib(rss)), fmt.Sprintf("%.1f", mib(hwm)),
			strconv.FormatInt(searches.Load(), 10), strconv.FormatInt(remembers.Load(), 10))
		return nil
	}
	if err := row(); err != nil {
		return err
	}
	tick := time.NewTicker(sample)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case err := <-errs:
			cancel()
			wg.Wait()
			return err
		case <-ctx.Done():
			done = true
		case <-tick.C:
			if err := row(); err != nil {
				return err
			}
		}
	}
	wg.Wait()
	if err := row(); err != nil {
		return err
	}
	if profiles != "" {
		return heapProfile(pal, filepath.Join(profiles, "end.heap"))
	}
	return nil
}

// heapProfile saves the daemon's heap profile, after a GC, to path.
func heapProfile(pal, path string) error {
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", daemon.SocketPath(pal))
	}}}
	resp, err := hc.Get("http://memminer/debug/pprof/heap?gc=1")
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("heap profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	fmt.Printf("heap profile: %s\n", path)
	return f.Close()
}
