package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	type step struct {
		after       time.Duration // since the previous step
		done, total int64
	}
	tests := []struct {
		name  string
		bytes bool
		steps []step
		want  string // before finish
	}{
		{"first report is drawn", false, []step{{0, 1, 40}}, "\rmining   2% (1 of 40)\x1b[K"},
		{"a report within 100 ms is skipped", false, []step{{0, 1, 40}, {50 * time.Millisecond, 2, 40}},
			"\rmining   2% (1 of 40)\x1b[K"},
		{"a later one is drawn", false, []step{{0, 1, 40}, {100 * time.Millisecond, 20, 40}},
			"\rmining   2% (1 of 40)\x1b[K\rmining  50% (20 of 40)\x1b[K"},
		{"the last is always drawn", false, []step{{0, 1, 40}, {time.Millisecond, 40, 40}},
			"\rmining   2% (1 of 40)\x1b[K\rmining 100% (40 of 40)\x1b[K"},
		{"bytes", true, []step{{0, 3 << 20, 28 << 20}}, "\rmining  10% (3.0 MiB of 28.0 MiB)\x1b[K"},
		{"unknown total", true, []step{{0, 2048, -1}}, "\rmining 2.0 KiB\x1b[K"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			clock := time.Unix(0, 0)
			p := &progress{w: &b, label: "mining", bytes: tt.bytes, now: func() time.Time { return clock }}
			for _, s := range tt.steps {
				clock = clock.Add(s.after)
				p.set(s.done, s.total)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("drew %q, want %q", got, tt.want)
			}
			p.finish()
			if got, want := b.String(), tt.want+"\r\x1b[K"; got != want {
				t.Errorf("after finish %q, want %q", got, want)
			}
		})
	}
}

func TestProgressLinesOffTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, w := range map[string]io.Writer{"buffer": &bytes.Buffer{}, "file": f} {
		if p := newProgress(w, "mining", false); !p.lines {
			t.Errorf("%s: a progress redrawn in place on a writer that is no terminal", name)
		}
	}
	var nilp *progress
	nilp.set(1, 2) // nil: no progress, no panic
	nilp.finish()

	// Plain lines: none in the first seconds, then one every few.
	var b bytes.Buffer
	clock := time.Unix(0, 0)
	p := &progress{w: &b, label: "mining", now: func() time.Time { return clock }, lines: true, start: clock}
	for _, s := range []struct {
		after       time.Duration
		done, total int64
	}{{time.Second, 1, 40}, {4 * time.Second, 10, 40}, {time.Second, 11, 40}, {4 * time.Second, 30, 40}, {time.Second, 40, 40}} {
		clock = clock.Add(s.after)
		p.set(s.done, s.total)
	}
	p.finish()
	if got, want := b.String(), "memminer: mining 25% (10 of 40)\nmemminer: mining 75% (30 of 40)\n"; got != want {
		t.Errorf("plain progress lines %q, want %q", got, want)
	}
	var empty bytes.Buffer
	(&progress{w: &empty, now: time.Now}).finish()
	if empty.Len() != 0 {
		t.Errorf("finish with nothing drawn wrote %q", empty.String())
	}
}
