package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
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

// RemoveStale removes the temporary files of every target, or of one
// (a memory file's, whose directory holds other writers' files), in the
// naming CreateTemp uses and in the older ones.
func TestRemoveStale(t *testing.T) {
	names := []string{
		".manifest.json.tmp-123456",
		".dwight.wing.tmp-98",
		".conflicts.json.4242.tmp",     // an older pattern
		".memory.md.memminer-123",      // memfile's older pattern
		".memory.md.tmp-7",             // CreateTemp's, of memory.md
		".memory.laptop.md.tmp-8",      // of another memory file
		"manifest.json", "dwight.wing", // the files themselves
		".hidden",
		"notes.tmp-1", // not hidden: not ours
		".x.tmp-abc",  // no number
		".memory.md.memminer-x",
	}
	tests := []struct {
		target string
		stale  []string // the names removed
	}{
		{"", []string{".manifest.json.tmp-123456", ".dwight.wing.tmp-98", ".conflicts.json.4242.tmp", ".memory.md.memminer-123", ".memory.md.tmp-7", ".memory.laptop.md.tmp-8"}},
		{"memory.md", []string{".memory.md.memminer-123", ".memory.md.tmp-7"}},
		{"dwight.wing", []string{".dwight.wing.tmp-98"}},
		{"notes", nil},
	}
	for _, tt := range tests {
		t.Run("target="+tt.target, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range names {
				if err := os.WriteFile(filepath.Join(dir, name), []byte("12345"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Mkdir(filepath.Join(dir, ".sub.tmp-1"), 0o700); err != nil {
				t.Fatal(err)
			}
			n, size, err := RemoveStale(dir, nil, tt.target)
			if err != nil || n != len(tt.stale) || size != int64(5*len(tt.stale)) {
				t.Fatalf("RemoveStale = %d, %d, %v; want %d, %d", n, size, err, len(tt.stale), 5*len(tt.stale))
			}
			for _, name := range names {
				_, err := os.Stat(filepath.Join(dir, name))
				if gone, stale := os.IsNotExist(err), slices.Contains(tt.stale, name); gone != stale {
					t.Errorf("%s: removed %t, want %t", name, gone, stale)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, ".sub.tmp-1")); err != nil {
				t.Errorf("a directory was removed: %v", err)
			}
		})
	}
	if n, _, err := RemoveStale(filepath.Join(t.TempDir(), "missing"), nil, ""); n != 0 || err != nil {
		t.Errorf("missing dir: %d, %v", n, err)
	}
}

// CreateTemp's names are the ones IsTemp and RemoveStale know.
func TestCreateTempIsTemp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	f, err := CreateTemp(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if name := filepath.Base(f.Name()); !IsTemp(name) {
		t.Errorf("IsTemp(%q) = false", name)
	}
	if n, _, err := RemoveStale(filepath.Dir(path), nil, "memory.md"); n != 1 || err != nil {
		t.Errorf("RemoveStale of memory.md = %d, %v; want its temporary file removed", n, err)
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
