package palace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/memminer/memminer/palace/internal/manifest"
	"github.com/memminer/memminer/palace/internal/wingfile"
)

// The manifest seals every wing file its writer wrote; a sealed file is
// opened without checking it again, and a file changed since, even to the
// same size and modification time, is not taken as sealed.
func TestWingFilesAreSealed(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("seals are read from Linux's stat")
	}
	dir := frozenPalace(t, nil)
	path := filepath.Join(dir, wingsDir, "alpha"+wingExt)
	man, err := manifest.Read(filepath.Join(dir, manifestName))
	if err != nil {
		t.Fatal(err)
	}
	s := man.Wings["alpha"].Seal
	if s == nil || man.Wings["beta"].Seal == nil {
		t.Fatalf("manifest seals %+v", man.Wings)
	}
	open := func() *wingFileV3 {
		t.Helper()
		v, err := openWing(path, maxWingFile, s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.f.Close() })
		return v
	}
	if !open().sealed {
		t.Fatal("the file its writer sealed is not taken as sealed")
	}
	flipByte(t, path, arrayAt(t, path, wingfile.SecStrs)+5) // read at a hit only
	if open().sealed {
		t.Fatal("a changed file is taken as sealed")
	}
}

// A writer seals the wing files it checked whole, so a palace written
// before seals gets them at its next write.
func TestWriterSealsCheckedWings(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("seals are read from Linux's stat")
	}
	dir := frozenPalace(t, nil)
	manPath := filepath.Join(dir, manifestName)
	man, err := manifest.Read(manPath)
	if err != nil {
		t.Fatal(err)
	}
	for id, e := range man.Wings {
		e.Seal = nil
		man.Wings[id] = e
	}
	data, err := json.Marshal(man)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	p := openT(t, dir, nil, false)
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if man, err = manifest.Read(manPath); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"alpha", "beta"} {
		if man.Wings[id].Seal == nil {
			t.Errorf("wing %s not sealed after a writer checked it", id)
		}
	}
}
