package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/memminer/memminer/internal/bytesize"
)

// progress redraws one line on a terminal with how far a long task has got,
// and clears it when the task ends, so the line never reaches a log.
type progress struct {
	w     io.Writer
	label string
	bytes bool // done and total are byte counts
	now   func() time.Time
	last  time.Time
	drawn bool
}

// progressEvery is how often the line is redrawn at most.
const progressEvery = 100 * time.Millisecond

// terminalProgress returns a progress line on w when w is a terminal, else
// nil: a script reading stderr gets no redrawn lines.
func terminalProgress(w io.Writer, label string, bytes bool) *progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &progress{w: w, label: label, bytes: bytes, now: time.Now}
}

// set reports done of total; total ≤ 0 means not known.
func (p *progress) set(done, total int64) {
	t := p.now()
	if p.drawn && done != total && t.Sub(p.last) < progressEvery {
		return
	}
	p.last, p.drawn = t, true
	count := func(n int64) string {
		if p.bytes {
			return bytesize.Format(n)
		}
		return fmt.Sprint(n)
	}
	if total <= 0 {
		fmt.Fprintf(p.w, "\r%s %s\x1b[K", p.label, count(done))
		return
	}
	fmt.Fprintf(p.w, "\r%s %3d%% (%s of %s)\x1b[K", p.label, done*100/total, count(done), count(total))
}

// finish clears the line; on nil it does nothing.
func (p *progress) finish() {
	if p != nil && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
