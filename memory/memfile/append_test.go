package memfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestAppendEndKeepsOtherAppenders: remember's appends and another
// process's `echo >> memory.md` at the same time lose no line.
func TestAppendEndKeepsOtherAppenders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	if err := os.WriteFile(path, []byte("# m\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 200
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range n {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Error(err)
				return
			}
			fmt.Fprintf(f, "- echo %d\n", i)
			f.Close()
		}
	}()
	for i := 0; i < n; {
		s, err := Read(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		err = AppendEnd(context.Background(), s, []byte(fmt.Sprintf("- remembered %d\n", i)), true)
		if errors.Is(err, ErrChanged) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		i++
	}
	wg.Wait()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		for _, want := range []string{fmt.Sprintf("- echo %d\n", i), fmt.Sprintf("- remembered %d\n", i)} {
			if strings.Count(string(data), want) != 1 {
				t.Fatalf("%q appears %d times", want, strings.Count(string(data), want))
			}
		}
	}
}

func TestAppendEnd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.md")
	s, err := Read(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := AppendEnd(ctx, s, []byte("# m\n- a\n"), false); err != nil {
		t.Fatal(err)
	}
	if err := AppendEnd(ctx, s, []byte("# m\n- b\n"), false); !errors.Is(err, ErrChanged) {
		t.Fatalf("creating a file created meanwhile: %v, want ErrChanged", err)
	}
	s, _ = Read(path, 0)
	if err := os.WriteFile(path, []byte("# m\n- a\n- x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AppendEnd(ctx, s, []byte("- c\n"), false); !errors.Is(err, ErrChanged) {
		t.Fatalf("a grown file, tail not after lines: %v, want ErrChanged", err)
	}
	if err := os.WriteFile(path, []byte("# m\n- z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AppendEnd(ctx, s, []byte("- c\n"), true); !errors.Is(err, ErrChanged) {
		t.Fatalf("a rewritten file: %v, want ErrChanged", err)
	}
	if err := os.WriteFile(path, []byte("# m\n- a\n- x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AppendEnd(ctx, s, []byte("- c\n"), true); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "# m\n- a\n- x\n- c\n" {
		t.Fatalf("file = %q", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want the file's 0600 kept", fi.Mode().Perm())
	}
}

// TestWriteWindow: what another writer does between Write's check and
// its rename is not lost: an appended line is carried over, and a file
// renamed into place is put back (ErrChanged).
func TestWriteWindow(t *testing.T) {
	ctx := context.Background()
	t.Cleanup(func() { beforeReplace = nil })
	path := filepath.Join(t.TempDir(), "memory.md")
	if err := os.WriteFile(path, []byte("- a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := Read(path, 0)
	beforeReplace = func(p string) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("- appended in the window\n")
		f.Close()
	}
	if err := Write(ctx, s, []byte("- a (superseded 2026-12-04)\n")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "- a (superseded 2026-12-04)\n- appended in the window\n" {
		t.Fatalf("file = %q", data)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(leftovers) > 0 {
		t.Fatalf("left behind: %v", leftovers)
	}

	s, _ = Read(path, 0)
	beforeReplace = func(p string) {
		other := p + ".editor"
		if err := os.WriteFile(other, []byte("- saved by an editor\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(other, p); err != nil {
			t.Fatal(err)
		}
	}
	err := Write(ctx, s, []byte("- mine\n"))
	data, _ = os.ReadFile(path)
	if isLinux() {
		if !errors.Is(err, ErrChanged) || string(data) != "- saved by an editor\n" {
			t.Fatalf("a file renamed into place in the window: err %v, file %q; want ErrChanged and the editor's file", err, data)
		}
	}
}

// TestAppendEndReplaced: an editor's atomic save that lands while the note
// is appended (the note then went to the displaced file) is reported.
func TestAppendEndReplaced(t *testing.T) {
	t.Cleanup(func() { afterAppend = nil })
	path := filepath.Join(t.TempDir(), "memory.md")
	if err := os.WriteFile(path, []byte("- a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := Read(path, 0)
	afterAppend = func(p string) {
		if err := os.WriteFile(p+".new", []byte("- a\n- saved by an editor\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(p+".new", p); err != nil {
			t.Fatal(err)
		}
	}
	if err := AppendEnd(context.Background(), s, []byte("- b\n"), true); !errors.Is(err, ErrReplaced) {
		t.Fatalf("err = %v, want ErrReplaced", err)
	}
}

// TestAppendEndTruncated: an editor that saves in place (truncates the
// file and writes its buffer back) after the note was appended, or
// before, so that the note landed at the start of the emptied file and
// is then overwritten, loses it; the writer is told (ErrTruncated, which
// matches ErrReplaced), never that the note is written.
func TestAppendEndTruncated(t *testing.T) {
	t.Cleanup(func() { afterAppend = nil })
	const before, buffer = "- a\n", "- a\n- the editor's own line, longer than the note\n"
	tests := []struct {
		name string
		save func(p string) error
	}{
		{"its buffer as it was", func(p string) error { return os.WriteFile(p, []byte(before), 0o644) }},
		{"its buffer, grown", func(p string) error { return os.WriteFile(p, []byte(buffer), 0o644) }},
		{"emptied", func(p string) error { return os.Truncate(p, 0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "memory.md")
			if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
				t.Fatal(err)
			}
			s, _ := Read(path, 0)
			afterAppend = func(p string) {
				if err := tt.save(p); err != nil {
					t.Fatal(err)
				}
			}
			if err := AppendEnd(context.Background(), s, []byte("- b\n"), true); !errors.Is(err, ErrTruncated) || !errors.Is(err, ErrReplaced) {
				t.Fatalf("err = %v, want ErrTruncated", err)
			}
		})
	}
}
