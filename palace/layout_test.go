package palace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWrongKindOfPalaceFileIsRepaired: a manifest.json that is a
// directory, or a wings/ that is a file, once made every command fail and
// was never repaired. A reader reports the wings as damaged (to rebuild
// from markdown) instead of failing; the writer lock moves the odd entry
// aside (keeping it) and the next flush writes the palace whole again.
func TestWrongKindOfPalaceFileIsRepaired(t *testing.T) {
	for _, name := range []string{manifestName, wingsDir} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "palace")
			src := savedPalace(t, dir)
			path := filepath.Join(dir, name)
			if err := os.RemoveAll(path); err != nil {
				t.Fatal(err)
			}
			if name == manifestName {
				err := os.Mkdir(path, 0o700)
				if err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(path, []byte("not a directory"), 0o600); err != nil {
				t.Fatal(err)
			}

			r := openT(t, dir, nil, true)
			if name == wingsDir && (len(r.Damaged()) != 1 || r.Damaged()[0].Wing != "a") {
				t.Fatalf("reader: damaged %+v, want wing a", r.Damaged())
			}
			if err := r.Lock(ctx, 0); err != nil {
				t.Fatalf("Lock: %v", err)
			}
			if name == wingsDir {
				// What mine.Repair does: the wing again from its markdown.
				if _, err := r.ApplySource(ctx, "a", src, []Note{note("n1", "", "a note", 1)}); err != nil {
					t.Fatal(err)
				}
				r.ClearDamage("a")
			}
			if err := r.Flush(); err != nil {
				t.Fatalf("Flush after the repair: %v", err)
			}
			r.Close()
			if fi, err := os.Stat(filepath.Join(dir, manifestName)); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("manifest after the repair: %v", err)
			}
			if fi, err := os.Stat(filepath.Join(dir, wingsDir)); err != nil || !fi.IsDir() {
				t.Fatalf("wings after the repair: %v", err)
			}
			entries, _ := os.ReadDir(dir)
			aside := false
			for _, e := range entries {
				aside = aside || strings.HasPrefix(e.Name(), name+".damaged-")
			}
			if !aside {
				t.Errorf("the damaged %s was not kept aside: %v", name, entries)
			}
			q := openT(t, dir, nil, true)
			if len(q.Damaged()) != 0 || len(q.Notes("a")) != 1 {
				t.Errorf("after the repair: damaged %+v, notes %+v", q.Damaged(), q.Notes("a"))
			}
		})
	}
}

// savedPalace writes a palace in dir with wing a holding one note from
// one source, closes it and returns the source.
func savedPalace(t *testing.T, dir string) Source {
	t.Helper()
	p := openT(t, dir, nil, false)
	src := Source{Path: "/hive/agents/a/memory.md", Agent: "a", Hash: "h", Size: 1, Mtime: time.Unix(100, 0).UTC()}
	if _, err := p.ApplySource(context.Background(), "a", src, []Note{note("n1", "", "a note", 1)}); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	return src
}

// TestWingFileOfTheWrongKindIsRepaired: a directory where a wing file
// should be was reported as a missing wing file, and no writer could
// rename the rebuilt wing over it. A reader names the damage; the writer
// lock moves the directory aside within wings/ (its contents kept, under
// a name the palace ignores), and the rebuilt wing is written in its place.
func TestWingFileOfTheWrongKindIsRepaired(t *testing.T) {
	testWrongKindOfWingFile(t, "directory", func(path string) error {
		if err := os.Mkdir(path, 0o700); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(path, "keep.txt"), []byte("mine"), 0o600)
	}, func(t *testing.T, aside string) {
		if data, err := os.ReadFile(filepath.Join(aside, "keep.txt")); err != nil || string(data) != "mine" {
			t.Errorf("contents of the directory set aside: %q, %v", data, err)
		}
	})
}

// testWrongKindOfWingFile replaces the file of wing a with what make
// makes (kind), and checks that a reader locking late and a writer each
// report it, rebuild the wing and keep it aside (check looks at it).
func testWrongKindOfWingFile(t *testing.T, kind string, make func(path string) error, check func(t *testing.T, aside string)) {
	tests := []struct {
		name string
		// lockLate: a reader that takes the lock after loading (a search
		// saving its repair); else a writer from the start (a mine).
		lockLate bool
		cause    string
	}{
		{"reader locking late", true, "is a " + kind + ", not a wing file"},
		{"writer", false, "was a " + kind + ", not a wing file; moved aside to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "palace")
			src := savedPalace(t, dir)
			wingFile := filepath.Join(dir, wingsDir, "a.wing")
			if err := os.Remove(wingFile); err != nil {
				t.Fatal(err)
			}
			if err := make(wingFile); err != nil {
				t.Fatal(err)
			}

			p := openT(t, dir, nil, tt.lockLate)
			if tt.lockLate {
				if err := p.Lock(ctx, 0); err != nil {
					t.Fatalf("Lock: %v", err)
				}
			}
			d := p.Damaged()
			if len(d) != 1 || d[0].Wing != "a" || !strings.Contains(d[0].Err.Error(), tt.cause) || len(d[0].Sources) != 1 {
				t.Fatalf("damaged %+v, want wing a whose cause says %q", d, tt.cause)
			}
			// What mine.Repair does: the wing again from its markdown.
			if _, err := p.ApplySource(ctx, "a", src, []Note{note("n1", "", "a note", 1)}); err != nil {
				t.Fatal(err)
			}
			p.ClearDamage("a")
			if err := p.Flush(); err != nil {
				t.Fatalf("Flush after the repair: %v", err)
			}
			p.Close()

			if fi, err := os.Lstat(wingFile); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("wing file after the repair: %v, %v", fi, err)
			}
			asides, _ := filepath.Glob(filepath.Join(dir, wingsDir, "a.wing.damaged-*"))
			if len(asides) != 1 {
				t.Fatalf("set aside: %v, want one", asides)
			}
			check(t, asides[0])
			q := openT(t, dir, nil, true)
			if len(q.Damaged()) != 0 || len(q.Notes("a")) != 1 || len(q.Wings()) != 1 {
				t.Errorf("after the repair: damaged %+v, notes %+v, wings %v", q.Damaged(), q.Notes("a"), q.Wings())
			}
		})
	}
}
