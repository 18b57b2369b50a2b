package markdown

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/markdown/markdowntest"
)

// Parse holds the syntax tree of one section at a time, never that of
// the whole file, which takes about ten times the file (issue 11). The
// bound holds whatever the GC's timing: with GOGC at 100 the heap stays
// below twice what is live (the source and the notes, some 2.5 times the
// source) plus a section, while a whole tree alone is live for seconds
// and far above it (16 times), where the samples cannot miss it.
func TestParseMemoryStaysBelowEightTimesTheFile(t *testing.T) {
	src := markdowntest.Memory(100_000)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	base := testutil.HeapBytes()
	stop := testutil.HeapPeak()
	doc, err := Parse(src, ParseOptions{})
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(doc)
	ratio := float64(peak-base) / float64(len(src))
	t.Logf("parsing %d bytes took up to %.1f times the file on the heap", len(src), ratio)
	if ratio > 8 {
		t.Fatalf("parsing %d bytes took up to %.1f times the file on the heap, want at most 8", len(src), ratio)
	}
}
