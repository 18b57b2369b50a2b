package memfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.md")

	s, err := Read(path, 0)
	if err != nil || s.Exists {
		t.Fatalf("Read of a missing file: %+v, %v", s, err)
	}
	if err := Write(ctx, s, []byte("- a\n")); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != NewFileMode {
		t.Fatalf("new file: %v, %v; want mode %v", info, err, NewFileMode)
	}

	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	s, err = Read(path, 0)
	if err != nil || s.Hash != Hash([]byte("- a\n")) {
		t.Fatalf("Read: %+v, %v", s, err)
	}
	if err := Write(ctx, s, []byte("- a\n- b\n")); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o640 {
		t.Errorf("mode after write: %v, want 0640", info.Mode().Perm())
	}

	// Another writer changes the file after the read: nothing is written.
	s, _ = Read(path, 0)
	if err := os.WriteFile(path, []byte("- edited\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, s, []byte("- lost\n")); !errors.Is(err, ErrChanged) {
		t.Fatalf("write over a changed file: %v, want ErrChanged", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "- edited\n" {
		t.Errorf("file = %q, want the other writer's", got)
	}
	// A file created after a read that found none is not replaced either.
	other := filepath.Join(dir, "other.md")
	s, _ = Read(other, 0)
	os.WriteFile(other, []byte("x\n"), 0o644)
	if err := Write(ctx, s, []byte("y\n")); !errors.Is(err, ErrChanged) {
		t.Fatalf("write over a created file: %v, want ErrChanged", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"big.md": "0123456789", "bin.md": "a\x00b", "latin1.md": "caf\xe9\n"} {
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	tests := []struct {
		path string
		err  error
	}{
		{"big.md", ErrTooLarge},
		{"bin.md", ErrNotText},
		{"latin1.md", ErrNotText},
		{".", ErrNotRegular},
	}
	for _, tt := range tests {
		if _, err := Read(filepath.Join(dir, tt.path), 5); !errors.Is(err, tt.err) {
			t.Errorf("Read(%s) = %v, want %v", tt.path, err, tt.err)
		}
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	unlock()
	unlock2, err := Lock(context.Background(), dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}
