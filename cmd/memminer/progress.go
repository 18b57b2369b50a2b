package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/memminer/memminer/internal/bytesize"
)

// progress tells how far a long task has got. On a terminal it redraws
// one line and clears it when the task ends, so the line never reaches a
// log; elsewhere (a pipe, a log file, a service) it writes a plain line
// every progressLineEvery once the task has run that long, so a script
// or a person reading a log sees a long mine move and a short one says
// nothing.
type progress struct {
	w     io.Writer
	label string
	bytes bool // done and total are byte counts
	now   func() time.Time
	last  time.Time
	drawn bool
	// lines: not a terminal; start is when the task began.
	lines bool
	start time.Time
}

// progressEvery is how often the line is redrawn at most on a terminal.
const progressEvery = 100 * time.Millisecond

// progressLineEvery is how often a plain progress line is written at most;
// a variable for tests.
var progressLineEvery = 5 * time.Second

// newProgress returns the progress of a task labelled label on w: redrawn
// in place on a terminal, plain lines every few seconds elsewhere.
func newProgress(w io.Writer, label string, bytes bool) *progress {
	p := &progress{w: w, label: label, bytes: bytes, now: time.Now}
	f, ok := w.(*os.File)
	p.lines = !ok || !term.IsTerminal(int(f.Fd()))
	p.start = p.now()
	return p
}

// set reports done of total; total ≤ 0 means not known. On nil it does
// nothing.
func (p *progress) set(done, total int64) {
	if p == nil {
		return
	}
	t := p.now()
	if p.lines {
		if t.Sub(p.start) < progressLineEvery || (p.drawn && t.Sub(p.last) < progressLineEvery) {
			return
		}
	} else if p.drawn && done != total && t.Sub(p.last) < progressEvery {
		return
	}
	p.last, p.drawn = t, true
	count := func(n int64) string {
		if p.bytes {
			return bytesize.Format(n)
		}
		return fmt.Sprint(n)
	}
	text := fmt.Sprintf("%s %s", p.label, count(done))
	if total > 0 {
		text = fmt.Sprintf("%s %3d%% (%s of %s)", p.label, done*100/total, count(done), count(total))
	}
	if p.lines {
		fmt.Fprintf(p.w, "memminer: %s\n", strings.Join(strings.Fields(text), " "))
		return
	}
	fmt.Fprintf(p.w, "\r%s\x1b[K", text)
}

// finish clears the line; on nil it does nothing.
func (p *progress) finish() {
	if p != nil && p.drawn && !p.lines {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
