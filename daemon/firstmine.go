package daemon

import (
	"time"

	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
)

// hasNotes reports whether any wing of p holds a note.
func hasNotes(p *palace.Palace) bool {
	for _, w := range p.Wings() {
		if w.Notes > 0 {
			return true
		}
	}
	return false
}

// firstMine follows the daemon's first mine of its hive, so status can say
// how far it got while commands answer from the wings mined so far.
type firstMine struct {
	started time.Time
	scanned bool           // the first scan has queued everything it found
	left    map[string]int // agent directory → files its mine reads
	total   int            // files the first scan found to mine
	done    int            // of those, files mined
}

// firstMineQueued records, during the first scan, an agent directory
// queued with files to mine. d.mu must be held.
func (d *Daemon) firstMineQueued(dir string, files int) {
	if d.first == nil || d.first.scanned {
		return
	}
	d.first.total += files - d.first.left[dir]
	d.first.left[dir] = files
}

// firstMineScanned marks the first scan done; with nothing queued the
// first mine is over. d.mu must be held.
func (d *Daemon) firstMineScanned() {
	if d.first == nil {
		return
	}
	d.first.scanned = true
	if len(d.first.left) == 0 {
		d.first = nil
	}
}

// firstMineDone records that the mine of an agent directory of the first
// scan ended (mined, failed or found gone).
func (d *Daemon) firstMineDone(dir string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.first == nil {
		return
	}
	if n, ok := d.first.left[dir]; ok {
		d.first.done += n
		delete(d.first.left, dir)
	}
	if d.first.scanned && len(d.first.left) == 0 {
		d.first = nil
	}
}

// firstMineProgress is the first mine's progress at now; nil once it is
// over. d.mu must be held.
func (d *Daemon) firstMineProgress(now time.Time) *api.MineProgress {
	f := d.first
	if f == nil {
		return nil
	}
	p := &api.MineProgress{FilesDone: f.done, FilesTotal: f.total, Started: f.started.UTC()}
	if !f.scanned {
		// Still counting: a partial total would only mislead.
		p.FilesTotal = 0
		return p
	}
	if f.done > 0 && f.total > f.done {
		eta := now.Sub(f.started).Seconds() / float64(f.done) * float64(f.total-f.done)
		p.ETASeconds = &eta
	}
	return p
}
