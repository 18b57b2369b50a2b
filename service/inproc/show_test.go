package inproc_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/inproc"
)

// TestShowResolvesRefs: a note is found by its id, a unique prefix of it,
// FILE:LINE with FILE absolute, relative to the caller's directory or to
// the hive, or the end of its path; what names no single note is a
// *api.RefError of the sentinel that says why.
func TestShowResolvesRefs(t *testing.T) {
	ctx := context.Background()
	tmp, hive := kimsHive(t)
	s := inproc.New(inproc.Options{Dir: filepath.Join(tmp, "palace"), Hive: hive})
	if _, err := s.Show(ctx, api.ShowRequest{Ref: "agents/kim/memory.md:3"}); !errors.Is(err, palace.ErrEmpty) {
		t.Fatalf("show of no palace: %v, want palace.ErrEmpty", err)
	}
	if _, err := s.Mine(ctx, api.MineRequest{Path: hive}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(hive, "agents", "kim", "memory.md")
	want, err := s.Show(ctx, api.ShowRequest{Ref: file + ":3"})
	if err != nil || want.Text != "The printer is on the second floor." || want.Path != file {
		t.Fatalf("show %s:3: %+v, %v", file, want, err)
	}
	tests := []struct {
		ref, dir string
		err      error // nil: want the note
	}{
		{want.ID, "", nil},
		{want.ID[:api.MinRefPrefix], "", nil},
		{"kim/memory.md:3", filepath.Join(hive, "agents"), nil},
		{"agents/kim/memory.md:3", "", nil},
		{"memory.md:3", "", nil},
		{want.ID[:api.MinRefPrefix-1], "", api.ErrBadRef},
		{"nonsense", "", api.ErrBadRef},
		{"0123456789abcdef0123456789abcdef", "", api.ErrNoNote},
		{"ffffff", "", api.ErrNoNote},
		{"agents/kim/memory.md:99", "", api.ErrNoNote},
	}
	for _, tt := range tests {
		got, err := s.Show(ctx, api.ShowRequest{Ref: tt.ref, Dir: tt.dir})
		var re *api.RefError
		switch {
		case tt.err == nil && (err != nil || got.ID != want.ID):
			t.Errorf("show %q from %q: %s, %v; want note %s", tt.ref, tt.dir, got.ID, err, want.ID)
		case tt.err != nil && (!errors.Is(err, tt.err) || !errors.As(err, &re)):
			t.Errorf("show %q: %v, want a *api.RefError matching %v", tt.ref, err, tt.err)
		}
	}
}
