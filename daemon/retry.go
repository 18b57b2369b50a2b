package daemon

import "time"

// failure is a file, or a whole agent directory, whose mine failed.
type failure struct {
	FileError
	wingLevel bool
	mtime     time.Time
	size      int64
	// skip is how many more ticks pass before the file is retried
	// unchanged.
	skip int
}

// fail records one more failure of path in tab under key (d.mu held). A
// file that failed before in the same state is retried after twice as many
// ticks as last time; a changed file starts over.
func (d *Daemon) fail(tab map[string]*failure, key, path, wing, msg string, st fileStat, now time.Time, wingLevel bool) {
	f := tab[key]
	same := f != nil && f.mtime.Equal(st.mtime) && f.size == st.size
	if !same {
		f = &failure{FileError: FileError{Wing: wing, Path: path, Since: now}, wingLevel: wingLevel, mtime: st.mtime, size: st.size}
		tab[key] = f
	}
	if f.Failures == 0 || f.Error != msg {
		d.log.Warn("mine failed; retrying when the file changes or at the next tick", "wing", wing, "path", path, "err", msg)
	} else {
		d.log.Debug("mine failed again", "wing", wing, "path", path, "failures", f.Failures+1, "err", msg)
	}
	f.Failures++
	f.Error = msg
	f.Last = now
	// Ticks decrement skip before looking at it: 1 retries at the next
	// tick, 2 skips one tick, 4 three, …
	f.skip = min(1<<min(f.Failures-1, 10), maxRetrySkip)
	f.NextRetry = now.Add(time.Duration(f.skip) * d.opts.MineInterval).UTC()
}
