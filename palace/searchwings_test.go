package palace

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSearchWingSelection checks which wings a search reads: several
// requested, each once, some excluded, and an excluded wing that is on disk
// but not loaded still counts as known.
func TestSearchWingSelection(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	for _, w := range []string{"angela", "dwight", "pam"} {
		src := Source{Path: "/hive/agents/" + w + "/memory.md", Agent: w}
		if _, err := p.ApplySource(ctx, w, src, []Note{note(w+"-n", "", "the shared fact of "+w, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	all := openT(t, dir, nil, true)
	partial, err := Open(ctx, dir, Options{ReadOnly: true, Wings: []string{"dwight", "pam"}})
	if err != nil {
		t.Fatal(err)
	}
	defer partial.Close()

	tests := []struct {
		name    string
		p       *Palace
		opts    SearchOptions
		want    []string // wings of the hits, sorted
		wantErr string
	}{
		{"every wing", all, SearchOptions{}, []string{"angela", "dwight", "pam"}, ""},
		{"two wings", all, SearchOptions{Wings: []string{"pam", "dwight"}}, []string{"dwight", "pam"}, ""},
		{"a wing twice counts once", all, SearchOptions{Wings: []string{"pam", "pam"}}, []string{"pam"}, ""},
		{"exclude one", all, SearchOptions{ExcludeWings: []string{"dwight"}}, []string{"angela", "pam"}, ""},
		{"include and exclude", all, SearchOptions{Wings: []string{"dwight", "pam"}, ExcludeWings: []string{"pam"}}, []string{"dwight"}, ""},
		{"exclude every wing", all, SearchOptions{ExcludeWings: []string{"angela", "dwight", "pam"}}, nil, ""},
		{"exclude the only wing", all, SearchOptions{Wings: []string{"pam"}, ExcludeWings: []string{"pam"}}, nil, ""},
		{"exclude a wing not loaded", partial, SearchOptions{Wings: []string{"dwight"}, ExcludeWings: []string{"angela"}}, []string{"dwight"}, ""},
		{"unknown wing", all, SearchOptions{Wings: []string{"pam", "zed"}}, nil, `unknown wing "zed" (known wings: angela, dwight, pam)`},
		{"unknown excluded wing", partial, SearchOptions{Wings: []string{"dwight"}, ExcludeWings: []string{"zed"}}, nil, `unknown wing "zed" (known wings: angela, dwight, pam)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Results = 10
			for _, explain := range []bool{false, true} {
				hits, _, err := tt.p.search(ctx, "shared fact", tt.opts, explain)
				if tt.wantErr != "" {
					if !errors.Is(err, ErrUnknownWing) || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("explain %t: error %v, want %q", explain, err, tt.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("explain %t: %v", explain, err)
				}
				var got []string
				for _, h := range hits {
					got = append(got, h.Wing)
				}
				slices.Sort(got)
				if !slices.Equal(got, tt.want) {
					t.Fatalf("explain %t: hits in wings %v, want %v", explain, got, tt.want)
				}
			}
		})
	}
}

// BenchmarkSearchResults times a hybrid search of 20 wings of 1,000 notes
// asking for the default 5 hits and for the 1000 that search -l and -c ask
// for, in one run so the pair compares under the same load.
func BenchmarkSearchResults(b *testing.B) {
	p := benchPalaceWith(b, hashVectors{}, 20, 1000)
	for _, n := range []int{DefaultResults, 1000} {
		b.Run(fmt.Sprintf("results=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			hits := 0
			for b.Loop() {
				hs, err := p.Search(context.Background(), "pgbouncer release staging timeout", SearchOptions{Results: n})
				if err != nil {
					b.Fatal(err)
				}
				hits = len(hs)
			}
			b.ReportMetric(float64(hits), "hits")
		})
	}
}
