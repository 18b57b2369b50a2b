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
