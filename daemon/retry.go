package daemon

import (
	"log/slog"
	"sync"
	"time"

	"github.com/memminer/memminer/service/api"
)

// maxRetrySkip caps the failure backoff at this many ticks.
const maxRetrySkip = 32

// fileStat is what the backoff knows of a failing file's state.
type fileStat struct {
	mtime time.Time
	size  int64
}

func (s fileStat) same(o fileStat) bool { return s.mtime.Equal(o.mtime) && s.size == o.size }

// failure is a file, an agent directory or a wing whose mine (or
// re-embedding) failed.
type failure struct {
	api.FileError
	wingLevel bool
	stat      fileStat
	// skip is how many more ticks pass before it is retried unchanged.
	skip int
}

// attempt is one failed try, for backoff.fail.
type attempt struct {
	// key is what is retried: a file or directory path, or a wing.
	key string
	// path and wing are reported in status.
	path, wing string
	err        string
	// stat is the file's state when it failed; zero for a directory or a
	// wing. A file that changes is retried at once.
	stat fileStat
	// wingLevel is set for a failure of a whole agent directory or wing.
	wingLevel bool
}

// backoff is a table of failures, each retried when it changes or,
// unchanged, after a number of mine-loop ticks that doubles with every
// failure (1, 2, 4, … up to maxRetrySkip). It is safe for concurrent use.
type backoff struct {
	log      *slog.Logger
	interval time.Duration // the mine loop's tick, for NextRetry

	mu    sync.Mutex
	items map[string]*failure
}

func newBackoff(log *slog.Logger, interval time.Duration) *backoff {
	return &backoff{log: log, interval: interval, items: map[string]*failure{}}
}

// fail records one more failure. One that failed before in the same state
// is retried after twice as many ticks as last time; a changed one starts
// over.
func (b *backoff) fail(a attempt, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.items[a.key]
	if f == nil || !f.stat.same(a.stat) {
		f = &failure{FileError: api.FileError{Wing: a.wing, Path: a.path, Since: now}, wingLevel: a.wingLevel, stat: a.stat}
		b.items[a.key] = f
	}
	if f.Failures == 0 || f.Error != a.err {
		b.log.Warn("mine failed; retrying when the file changes or at the next tick", "wing", a.wing, "path", a.path, "err", a.err)
	} else {
		b.log.Debug("mine failed again", "wing", a.wing, "path", a.path, "failures", f.Failures+1, "err", a.err)
	}
	f.Failures++
	f.Error = a.err
	f.Last = now
	// Ticks decrement skip before looking at it: 1 retries at the next
	// tick, 2 skips one tick, 4 three, …
	f.skip = min(1<<min(f.Failures-1, 10), maxRetrySkip)
	f.NextRetry = now.Add(time.Duration(f.skip) * b.interval).UTC()
}

// tick lets one mine-loop tick pass.
func (b *backoff) tick() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.items {
		if f.skip > 0 {
			f.skip--
		}
	}
}

// waiting reports whether key failed and waits out its backoff.
func (b *backoff) waiting(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.items[key]
	return ok && f.skip > 0
}

// heldBack reports whether the file at key failed in state st and waits
// out its backoff: changed, or due, it is tried again.
func (b *backoff) heldBack(key string, st fileStat) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.items[key]
	return ok && f.stat.same(st) && f.skip > 0
}

// clear drops key, reporting whether it was failing.
func (b *backoff) clear(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.items[key]
	delete(b.items, key)
	return ok
}

// drop drops every failure for which gone says so.
func (b *backoff) drop(gone func(key string, f *failure) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, f := range b.items {
		if gone(k, f) {
			delete(b.items, k)
		}
	}
}

// len is the number of failures.
func (b *backoff) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.items)
}

// errors lists the failures as status reports them, in no order.
func (b *backoff) errors() []api.FileError {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]api.FileError, 0, len(b.items))
	for _, f := range b.items {
		out = append(out, f.FileError)
	}
	return out
}
