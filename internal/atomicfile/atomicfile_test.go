package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "manifest.json")
	for _, content := range []string{"one", "two"} {
		if err := Write(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(path); err != nil || string(data) != content {
			t.Fatalf("read %q, %v; want %q", data, err, content)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("dir holds %v, %v; want only the file", entries, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
}

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	files := map[string]bool{ // name: is a stale temp file
		".manifest.json.tmp-123456": true,
		".dwight.wing.tmp-98":       true,
		".conflicts.json.4242.tmp":  true, // the older pattern
		"manifest.json":             false,
		"dwight.wing":               false,
		".hidden":                   false,
		"notes.tmp-1":               false, // not hidden: not ours
		".x.tmp-abc":                false,
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("12345"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".sub.tmp-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	n, size, err := RemoveStale(dir)
	if err != nil || n != 3 || size != 15 {
		t.Fatalf("RemoveStale = %d, %d, %v; want 3, 15", n, size, err)
	}
	for name, stale := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != stale {
			t.Errorf("%s: removed %t, want %t", name, gone, stale)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".sub.tmp-1")); err != nil {
		t.Errorf("a directory was removed: %v", err)
	}
	if n, _, err := RemoveStale(filepath.Join(dir, "missing")); n != 0 || err != nil {
		t.Errorf("missing dir: %d, %v", n, err)
	}
}

// WriteFunc streams the file and may fill in a header last; a failed
// write leaves the old file as it was and no temporary file behind.
func TestWriteFunc(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.wing")
	err := WriteFunc(path, 0o600, func(f *os.File) error {
		if _, err := f.Write([]byte("....body")); err != nil {
			return err
		}
		_, err := f.WriteAt([]byte("head"), 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "headbody" {
		t.Fatalf("read %q, %v; want headbody", data, err)
	}
	failed := errors.New("encoder failed")
	err = WriteFunc(path, 0o600, func(f *os.File) error {
		_, _ = f.Write([]byte("half"))
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("err = %v, want the write's", err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "headbody" {
		t.Fatalf("after a failed write read %q, %v; want the old content", data, err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
		t.Fatalf("dir holds %v, %v; want only the file", entries, err)
	}
}
