package palace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/palace/internal/wingfile"
)

// The support window of wing files (docs/palace.md): every version from
// wingfile.Oldest to wingfile.Current has a palace in testdata/v<N> whose
// wing files are of that version, and it opens with nothing damaged, as a
// reader and as a writer. A version out of the window is no version this
// build reads: its file is damaged (wingfile.UnknownVersionError, an
// ErrCorrupt), and the palace rebuilds that wing from its markdown.
func TestWingFileSupportWindow(t *testing.T) {
	for v := wingfile.Oldest; v <= wingfile.Current; v++ {
		t.Run(fmt.Sprint("v", v), func(t *testing.T) {
			src := filepath.Join("testdata", fmt.Sprint("v", v))
			files, err := filepath.Glob(filepath.Join(src, wingsDir, "*"+wingExt))
			if err != nil || len(files) == 0 {
				t.Fatalf("no wing files of version %d in %s (%v): every version read needs one", v, src, err)
			}
			for _, f := range files {
				if got := wingfile.VersionOf([]byte(testutil.ReadFile(t, f))); got != v {
					t.Fatalf("%s is of version %d, want %d", f, got, v)
				}
			}
			for _, readOnly := range []bool{true, false} {
				dir := filepath.Join(t.TempDir(), "palace")
				testutil.CopyDir(t, src, dir)
				p := openT(t, dir, &embedtest.Hashing{Dim: 8}, readOnly)
				if d := p.Damaged(); len(d) > 0 {
					t.Fatalf("read only %v: damaged %+v", readOnly, d)
				}
				if len(p.Wings()) != len(files) {
					t.Fatalf("read only %v: %d wings, want %d", readOnly, len(p.Wings()), len(files))
				}
				p.Close()
			}
		})
	}
	for _, v := range []int{wingfile.Oldest - 1, wingfile.Current + 1} {
		t.Run(fmt.Sprint("v", v), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "palace")
			testutil.CopyDir(t, filepath.Join("testdata", fmt.Sprint("v", wingfile.Current)), dir)
			path := filepath.Join(dir, wingsDir, "w"+wingExt)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data[7] = byte(v)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err = readWing(path, maxWingFile)
			var unknown *wingfile.UnknownVersionError
			if !errors.As(err, &unknown) || !errors.Is(err, ErrCorrupt) || !bytes.Equal(unknown.Magic, data[:8]) {
				t.Fatalf("reading a file of version %d: %v, want an UnknownVersionError that is ErrCorrupt", v, err)
			}
			p := openT(t, dir, nil, true)
			if d := p.Damaged(); len(d) != 1 || d[0].Wing != "w" || !errors.As(d[0].Err, &unknown) {
				t.Fatalf("damaged = %+v, want wing w, of an unknown version", d)
			}
		})
	}
}
