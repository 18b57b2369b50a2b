package palace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/palace/internal/manifest"
)

func TestRemoveWing(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// damage corrupts dwight's wing file before the palace is reopened.
		damage bool
		remine bool // mine dwight again before the flush
	}{
		{name: "healthy"},
		{name: "damaged", damage: true},
		{name: "removed then mined again", remine: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "palace")
			emb := &embedtest.Hashing{}
			p := openT(t, dir, emb, false)
			for _, w := range []string{"dwight", "pam"} {
				p.AddRoot(w, "/hive/agents/"+w)
				if _, err := p.ApplySource(ctx, w, Source{Path: "/hive/agents/" + w + "/memory.md"}, []Note{note(w+"1", "", "fact about "+w, 1), note(w+"2", "", "more on "+w, 2)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Flush(); err != nil {
				t.Fatal(err)
			}
			p.Close()
			wingFile := filepath.Join(dir, wingsDir, "dwight"+wingExt)
			if tt.damage {
				if err := os.WriteFile(wingFile, []byte("garbage"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			q := openT(t, dir, emb, false)
			r, err := q.RemoveWing("dwight")
			if err != nil {
				t.Fatal(err)
			}
			wantNotes := 2
			if tt.damage {
				wantNotes = 0
			}
			if r.Notes != wantNotes || !slices.Equal(r.Roots, []string{"/hive/agents/dwight"}) {
				t.Fatalf("removed %+v", r)
			}
			if q.HasWing("dwight") || len(q.Damaged()) != 0 {
				t.Fatalf("wing still there: %v, damaged %+v", q.Wings(), q.Damaged())
			}
			if _, err := q.Search(ctx, "fact", SearchOptions{Wings: []string{"dwight"}}); !errors.Is(err, ErrUnknownWing) {
				t.Fatalf("search of a removed wing: %v", err)
			}
			if tt.remine {
				if _, err := q.ApplySource(ctx, "dwight", Source{Path: "/hive/agents/dwight/memory.md"}, []Note{note("dwight3", "", "new fact", 1)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := q.Flush(); err != nil {
				t.Fatal(err)
			}
			q.Close()

			man, err := manifest.Read(filepath.Join(dir, manifestName))
			if err != nil {
				t.Fatal(err)
			}
			_, inManifest := man.Wings["dwight"]
			_, statErr := os.Stat(wingFile)
			if tt.remine {
				if !inManifest || statErr != nil {
					t.Fatalf("mined again after removal, then lost: manifest %v, file %v", inManifest, statErr)
				}
				return
			}
			if inManifest || !errors.Is(statErr, fs.ErrNotExist) {
				t.Fatalf("manifest entry %v, wing file %v", inManifest, statErr)
			}
			// Reopened, the palace has pam alone and nothing to rebuild.
			z := openT(t, dir, emb, true)
			if ws := z.Wings(); len(ws) != 1 || ws[0].ID != "pam" || len(z.Damaged()) != 0 {
				t.Fatalf("after reopen: wings %+v damaged %+v", ws, z.Damaged())
			}
		})
	}
}

func TestRemoveWingErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	if _, err := p.RemoveWing("nobody"); !errors.Is(err, ErrUnknownWing) {
		t.Fatalf("unknown wing: %v", err)
	}
	p.Close()
	r := openT(t, dir, nil, true)
	if _, err := r.RemoveWing("nobody"); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only palace: %v", err)
	}
}
