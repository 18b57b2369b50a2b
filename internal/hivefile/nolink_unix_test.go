//go:build unix

package hivefile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestNoLinkOutOfItsDirectory: a link is followed only inside the
// directory that may be read (Open: the file's own; OpenIn: root), and
// OpenFile, for a path resolved already, follows none, in any component.
func TestNoLinkOutOfItsDirectory(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "private.md")
	dir := filepath.Join(base, "agents", "a")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{outside, filepath.Join(dir, "sub", "real.md")} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"agents/a/out.md":    outside,
		"agents/a/in.md":     "sub/real.md",
		"agents/b":           "a/sub",
		"agents/a/sub/up.md": "../../../private.md",
	}
	for link, target := range links {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	at := func(rel string) string { return filepath.Join(base, rel) }
	tests := []struct {
		name string
		open func() (*os.File, error)
		err  error
	}{
		{"Open: a link out of the directory", func() (*os.File, error) { return Open(at("agents/a/out.md")) }, ErrOutside},
		{"Open: a link up and out", func() (*os.File, error) { return Open(at("agents/a/sub/up.md")) }, ErrOutside},
		{"Open: a link within the directory", func() (*os.File, error) { return Open(at("agents/a/in.md")) }, nil},
		{"OpenIn: a link within root", func() (*os.File, error) { return OpenIn(dir, at("agents/a/in.md")) }, nil},
		{"OpenIn: a directory link out of root", func() (*os.File, error) { return OpenIn(at("agents/b"), at("agents/b/real.md")) }, ErrOutside},
		{"OpenIn: a link out of root", func() (*os.File, error) { return OpenIn(dir, at("agents/a/out.md")) }, ErrOutside},
		{"OpenFile: a file", func() (*os.File, error) { return OpenFile(at("agents/a/sub/real.md"), os.O_RDWR|os.O_APPEND, 0) }, nil},
		{"OpenFile: a link", func() (*os.File, error) { return OpenFile(at("agents/a/in.md"), os.O_RDWR|os.O_APPEND, 0) }, ErrLink},
		{"OpenFile: a directory link on the way", func() (*os.File, error) { return OpenFile(at("agents/b/real.md"), os.O_RDWR|os.O_APPEND, 0) }, ErrLink},
		{"OpenFile: a directory", func() (*os.File, error) { return OpenFile(dir, os.O_RDONLY, 0) }, ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := tt.open()
			if f != nil {
				f.Close()
			}
			if tt.err == nil && err != nil || tt.err != nil && !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
		})
	}
}

// TestWalkFollowsNoLink: the walk one component at a time, which
// systems without openat2 use, refuses a link wherever it is, as the
// kernel's RESOLVE_NO_SYMLINKS does.
func TestWalkFollowsNoLink(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "a", "memory.md")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"link.md": real, "b": "a"} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, open := range []func(string, int, os.FileMode) (*os.File, error){openNoFollow, openWalk} {
		for path, want := range map[string]error{real: nil, filepath.Join(base, "link.md"): ErrLink, filepath.Join(base, "b", "memory.md"): ErrLink} {
			f, err := open(path, os.O_RDONLY, 0)
			if f != nil {
				f.Close()
			}
			if want == nil && err != nil || want != nil && !errors.Is(err, want) {
				t.Errorf("open %s: %v, want %v", path, err, want)
			}
		}
	}
}
