package hivefile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// noHang fails the test instead of letting it hang for the whole test
// timeout when fn blocks (the defect this package exists for).
func noHang(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

type readCase struct {
	name  string
	path  string
	limit int64
	want  string
	err   error
}

func TestReadLimited(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "memory.md")
	if err := os.WriteFile(regular, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.md")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	tests := []readCase{
		{"whole", regular, 100, "0123456789", nil},
		{"capped", regular, 4, "0123", nil},
		{"symlink to regular", link, 100, "0123456789", nil},
		{"directory", dir, 100, "", ErrNotRegular},
		{"missing", filepath.Join(dir, "gone.md"), 100, "", os.ErrNotExist},
	}
	tests = append(tests, specialFiles(t, dir)...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			var err error
			noHang(t, "ReadLimited("+tt.path+")", func() { got, err = ReadLimited(tt.path, tt.limit) })
			if !errors.Is(err, tt.err) || (tt.err != nil && err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if string(got) != tt.want {
				t.Errorf("read %q, want %q", got, tt.want)
			}
		})
	}
}

// A read allocates about the file once: io.ReadAll's growing buffer took
// 2.4 times this file.
func TestReadLimitedAllocatesTheFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	data := bytes.Repeat([]byte("- a note of the memory file\n"), 1<<16)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := ReadLimited(path, int64(len(data))+1)
	runtime.ReadMemStats(&after)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, %v; want the file's %d", len(got), err, len(data))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(data))*5/4 {
		t.Fatalf("reading %d bytes allocated %d, want at most 1.25 times the file", len(data), alloc)
	}
}
