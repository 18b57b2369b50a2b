package remember

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/memfile"
)

// inPlaceEditor is an editor that saves the machine's file in place while
// remember appends to it: at one step it reads the file into its buffer
// and truncates it (the open for writing), at the next it writes its
// buffer back with a line of its own, then rests a few steps; and again.
// Each step runs when remember calls tick, so every interleaving the
// cycle reaches is run in order, without sleeps: a note appended after
// the truncation lands at line 1 of the empty file, and the buffer then
// overwrites it; a note appended before it is cut off with the rest.
type inPlaceEditor struct {
	t    *testing.T
	path string
	// rest is how many ticks the editor rests before its next read: one
	// more after each save, from none to three, so its cycle does not
	// keep to remember's and meets each of its steps.
	rest  int
	saves int
	// overwrote counts the saves that overwrote what remember appended
	// to the emptied file (a note at line 1).
	overwrote int
	f         *os.File
	buf       []byte
}

func (e *inPlaceEditor) tick() {
	e.t.Helper()
	switch {
	case e.rest > 0:
		e.rest--
	case e.f == nil:
		buf, err := os.ReadFile(e.path)
		if err != nil {
			e.t.Error(err)
			return
		}
		if e.f, err = os.OpenFile(e.path, os.O_WRONLY|os.O_TRUNC, 0); err != nil {
			e.t.Error(err)
			return
		}
		e.buf = buf
	default:
		if info, err := e.f.Stat(); err == nil && info.Size() > 0 {
			e.overwrote++
		}
		e.saves++
		e.rest = e.saves % 4
		line := fmt.Sprintf("- Saved by the editor, %d\n", e.saves)
		if _, err := e.f.Write(append(e.buf, line...)); err != nil {
			e.t.Error(err)
		}
		if err := e.f.Close(); err != nil {
			e.t.Error(err)
		}
		e.f = nil
	}
}

// TestRememberKeepsNotesAnEditorRewrites: an editor that truncates and
// rewrites the machine's file in a loop while remember appends loses no
// note remember acknowledged, nor a line of its own (issue 47, item 15).
// The editor steps after each append (memfile's hook) and after each file
// mined (the mine's progress), in the goroutine remember runs in.
func TestRememberKeepsNotesAnEditorRewrites(t *testing.T) {
	const rel = "agents/dwight/memory.laptop.md"
	// Longer than any note: a note at line 1 of the emptied file is
	// overwritten whole by the editor's buffer.
	before := "# dwight's memory\n\n## Farm\n" + strings.Repeat("- The north field is ploughed before the south field every spring (added 2026-11-01)\n", 4)
	f := newFixture(t, map[string]string{rel: before})
	path := filepath.Join(f.hive, filepath.FromSlash(rel))
	ed := &inPlaceEditor{t: t, path: path}
	remove := memfile.AddHook(func(_ context.Context, c memfile.Change) {
		if c.Path == path {
			ed.tick()
		}
	})
	t.Cleanup(remove)
	f.opts.Mine.Progress = func(int, int) { ed.tick() }

	crops := []string{"beets", "kale", "rye", "oats", "leeks", "chard", "peas", "barley", "turnips", "squash", "millet", "fennel"}
	var acked []string
	for i, crop := range crops {
		text := fmt.Sprintf("Plot %s grows %s this year", strings.Repeat("I", i+1), crop)
		res, err := f.remember(t, Request{Wing: "dwight", Text: text})
		if err != nil {
			t.Errorf("remember %q: %v", text, err)
			continue
		}
		if !res.Added || res.ID == "" {
			t.Errorf("remember %q: %+v", text, res)
		}
		acked = append(acked, text)
	}
	got := f.read(t, rel)
	for _, text := range acked {
		if n := strings.Count(got, "- "+text+" (added 2026-12-01)\n"); n != 1 {
			t.Errorf("%q is %d times in the file, want once", text, n)
		}
	}
	for i := 1; i <= ed.saves; i++ {
		if n := strings.Count(got, fmt.Sprintf("- Saved by the editor, %d\n", i)); n != 1 {
			t.Errorf("the editor's save %d is %d times in the file, want once", i, n)
		}
	}
	if ed.f != nil {
		t.Errorf("remember acknowledged its last note while the editor held the file truncated")
	}
	if ed.saves < len(crops)/2 || ed.overwrote == 0 {
		t.Errorf("the editor saved %d times during %d notes, %d times over a note at line 1; the test did not run what it tests", ed.saves, len(crops), ed.overwrote)
	}
	if t.Failed() {
		t.Logf("the file:\n%s", got)
	}
}
