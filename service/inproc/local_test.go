package inproc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/inproc"
)

// found reports whether a search for query finds a note containing want.
func found(t *testing.T, s *inproc.Service, query, want string) bool {
	t.Helper()
	res, err := s.Search(context.Background(), api.SearchRequest{Query: query})
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	for _, h := range res.Results {
		if strings.Contains(h.Text, want) {
			return true
		}
	}
	return false
}

// kimsHive is a temporary directory holding a hive whose one agent, kim,
// has one note.
func kimsHive(t *testing.T) (tmp, hive string) {
	t.Helper()
	tmp = t.TempDir()
	hive = filepath.Join(tmp, "hive")
	if err := os.MkdirAll(filepath.Join(hive, "agents", "kim"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hive, "agents", "kim", "memory.md"), []byte("# Kim\n\n- The printer is on the second floor.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return tmp, hive
}

// TestWritesAreSearchable: each call opens the palace with the lock it
// needs; a mine and a remember are in the very next search.
func TestWritesAreSearchable(t *testing.T) {
	ctx := context.Background()
	tmp, hive := kimsHive(t)
	s := inproc.New(inproc.Options{Dir: filepath.Join(tmp, "palace"), Hive: hive})

	if _, err := s.Search(ctx, api.SearchRequest{Query: "printer"}); !errors.Is(err, palace.ErrEmpty) {
		t.Fatalf("search of no palace: %v, want palace.ErrEmpty", err)
	}
	if _, err := s.Search(ctx, api.SearchRequest{Query: "printer", Status: "draft"}); !errors.Is(err, api.ErrBadRequest) {
		t.Fatalf("search with a bad status: %v, want api.ErrBadRequest", err)
	}
	if _, err := s.Mine(ctx, api.MineRequest{Path: hive}); err != nil {
		t.Fatal(err)
	}
	if !found(t, s, "printer floor", "second floor") {
		t.Fatal("a mined note is not found")
	}
	res, err := s.Remember(ctx, api.RememberRequest{Request: remember.Request{Wing: "kim", Text: "The stapler lives in the annex."}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Line == 0 || !found(t, s, "stapler annex", "stapler") {
		t.Fatalf("a remembered note is not found at once (%+v)", res)
	}
	st, err := s.Status(ctx)
	if err != nil || st.Notes != 2 || len(st.Wings) != 1 {
		t.Fatalf("status: %+v, %v", st, err)
	}
}

// TestRememberSettingsOfTheRequest: the machine and the note-size limit
// are the caller's, as the request carries them (api.RememberRequest),
// the same with a daemon and without; empty is this host's machine and
// the default limit.
func TestRememberSettingsOfTheRequest(t *testing.T) {
	long := strings.Repeat("word ", 300) // 1,500 bytes
	tests := []struct {
		name     string
		machine  string
		maxBytes int64
		text     string
		file     string // written, relative to the hive
		tooLong  bool
	}{
		{name: "machine of the request", machine: "laptop", text: "The stapler lives in the annex.", file: "agents/kim/memory.laptop.md"},
		{name: "host's machine", text: "The stapler lives in the annex.", file: "agents/kim/" + hive.MachineFileName(hive.DefaultMachine())},
		{name: "limit of the request", maxBytes: 1000, text: long, tooLong: true},
		{name: "default limit", text: long, file: "agents/kim/" + hive.MachineFileName(hive.DefaultMachine())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			hiveDir := filepath.Join(tmp, "hive")
			if err := os.MkdirAll(filepath.Join(hiveDir, "agents", "kim"), 0o755); err != nil {
				t.Fatal(err)
			}
			s := inproc.New(inproc.Options{Dir: filepath.Join(tmp, "palace"), Hive: hiveDir})
			res, err := s.Remember(context.Background(), api.RememberRequest{
				Request: remember.Request{Wing: "kim", Text: tt.text}, Machine: tt.machine, MaxNoteBytes: tt.maxBytes,
			})
			if tt.tooLong {
				if !errors.Is(err, remember.ErrBadRequest) {
					t.Fatalf("a note over the request's limit: %v, want remember.ErrBadRequest", err)
				}
				return
			}
			if err != nil || res.File != tt.file {
				t.Fatalf("remember wrote %q (%v), want %q", res.File, err, tt.file)
			}
		})
	}
}

// TestOpenAsIs: AsIs opens the palace as its files hold it, a damaged
// wing listed and left alone (doctor reports it so); Read rebuilds it.
func TestOpenAsIs(t *testing.T) {
	ctx := context.Background()
	tmp, hiveDir := kimsHive(t)
	dir := filepath.Join(tmp, "palace")
	s := inproc.New(inproc.Options{Dir: dir, Hive: hiveDir})
	if _, err := s.Mine(ctx, api.MineRequest{Path: hiveDir}); err != nil {
		t.Fatal(err)
	}
	wingFile := filepath.Join(dir, "wings", "kim.wing")
	if err := os.WriteFile(wingFile, []byte("not a wing"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		access  inproc.Access
		damaged bool // the wing is listed damaged, its file left as it was
	}{
		{inproc.AsIs, true},
		{inproc.Read, false},
	}
	for _, tt := range tests {
		p, err := s.Open(ctx, nil, tt.access, nil)
		if err != nil {
			t.Fatal(err)
		}
		damaged := len(p.Damaged()) > 0
		p.Close()
		data, err := os.ReadFile(wingFile)
		if err != nil {
			t.Fatal(err)
		}
		if damaged != tt.damaged || (string(data) == "not a wing") != tt.damaged {
			t.Errorf("access %d: damaged %t, wing file left as it was %t; want %t", tt.access, damaged, string(data) == "not a wing", tt.damaged)
		}
	}
}
