package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/api"
	"github.com/memminer/memminer/local"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/remember"
)

// found reports whether a search for query finds a note containing want.
func found(t *testing.T, s *local.Service, query, want string) bool {
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

// TestWritesAreSearchable: each call opens the palace with the lock it
// needs; a mine and a remember are in the very next search.
func TestWritesAreSearchable(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	hive := filepath.Join(tmp, "hive")
	if err := os.MkdirAll(filepath.Join(hive, "agents", "kim"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hive, "agents", "kim", "memory.md"), []byte("# Kim\n\n- The printer is on the second floor.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := local.New(local.Options{Dir: filepath.Join(tmp, "palace"), Hive: hive, Machine: "laptop"})

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
