package palace

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/memminer/memminer/palace/internal/manifest"
	"github.com/memminer/memminer/palace/internal/wingfile"
)

// A listing is kept in the manifest while it names the wing's sources,
// is handed to Options.Unchanged with the wing, and is not trusted once
// the manifest was edited.
func TestListingKeptWhileItNamesTheSources(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dirInfo, err := os.Lstat(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := wingfile.SealOf(dirInfo); !ok {
		t.Skip("this system's stat gives no seal: no listing is recorded")
	}
	mem, notes := filepath.Join(root, "memory.md"), filepath.Join(root, "notes.md")
	dir := filepath.Join(t.TempDir(), "palace")

	// listed opens the palace as a miner does and reports whether it was
	// told a listing of wing w that holds for the directory.
	listed := func(t *testing.T) (bool, bool) {
		t.Helper()
		told, holds := false, false
		p, err := Open(ctx, dir, Options{Unchanged: func(id string, w ManifestWing) bool {
			told, holds = true, w.ListedAs(dirInfo)
			return false
		}})
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
		return told, holds
	}
	write := func(t *testing.T, paths []string, sources ...string) {
		t.Helper()
		p := openT(t, dir, nil, false)
		for _, s := range sources {
			if _, err := p.ApplySource(ctx, "w", Source{Path: s, Agent: "w", Hash: "h"}, []Note{note(s, "", "text of "+s, 1)}); err != nil {
				t.Fatal(err)
			}
		}
		p.AddRoot("w", root)
		p.SetListing("w", dirInfo, paths)
		if err := p.Flush(); err != nil {
			t.Fatal(err)
		}
		p.Close()
	}

	write(t, []string{mem}, mem)
	if told, holds := listed(t); !told || !holds {
		t.Fatalf("a listing of the wing's one source: told %v, holds %v", told, holds)
	}
	// A new listing of a wing left unloaded is written, not its entry as
	// it was read.
	other, err := os.Lstat(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := Open(ctx, dir, Options{Unchanged: func(string, ManifestWing) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Unloaded("w") {
		t.Fatal("the wing was not left unloaded")
	}
	p.SetListing("w", other, []string{mem})
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if m, err := manifest.Read(filepath.Join(dir, manifestName)); err != nil || !manifestWing(m.Wings["w"]).ListedAs(other) {
		t.Fatalf("the manifest after a new listing of an unloaded wing: %+v, %v", m.Wings["w"], err)
	}
	dirInfo = other
	if _, holds := listed(t); !holds {
		t.Fatal("the new listing is not trusted")
	}
	dirInfo, _ = os.Lstat(root)
	// A listing of other files than the sources is not kept.
	write(t, []string{mem, notes})
	if _, holds := listed(t); holds {
		t.Fatal("a listing of two files kept for a wing of one source")
	}
	write(t, []string{mem, notes}, notes)
	if _, holds := listed(t); !holds {
		t.Fatal("a listing of both sources not kept")
	}
	// A second file mined into the wing without a listing of its own: the
	// listing no longer names the sources.
	write(t, []string{mem, notes})
	p = openT(t, dir, nil, false)
	if _, err := p.ApplySource(ctx, "w", Source{Path: filepath.Join(root, "third.md"), Agent: "w", Hash: "h"}, []Note{note("third", "", "a third", 1)}); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if _, holds := listed(t); holds {
		t.Fatal("a listing kept after the wing gained a source")
	}

	// An entry whose listing was edited by hand is not trusted, nor kept.
	write(t, []string{mem, notes, filepath.Join(root, "third.md")})
	if _, holds := listed(t); !holds {
		t.Fatal("a listing of all three sources not kept")
	}
	path := filepath.Join(dir, manifestName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := regexp.MustCompile(`("listed":\{"dev":)\d+`).ReplaceAllString(string(data), "${1}7")
	if edited == string(data) {
		t.Fatalf("no listing in the manifest: %s", data)
	}
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if m, err := manifest.Read(path); err != nil || m.Wings["w"].Listed == nil {
		t.Fatalf("the edited manifest reads as %+v, %v", m.Wings["w"], err)
	}
	if told, _ := listed(t); told {
		t.Fatal("an edited entry was handed to Unchanged")
	}
	p = openT(t, dir, nil, false)
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if m, err := manifest.Read(path); err != nil || m.Wings["w"].Listed != nil {
		t.Fatalf("the edited entry's listing was written again: %+v, %v", m.Wings["w"], err)
	}
}
