package palace

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memminer/memminer/memory/govern"
)

// TestWingDomains: a wing's domain is the one assigned, else the first
// frontmatter domain: by identity.md, memory files, others, else global;
// a reopened (frozen) palace reads the same without thawing a wing.
func TestWingDomains(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	files := map[string][]struct{ file, domain string }{
		"eng":   {{"notes.md", "research"}, {"memory.md", "writing"}, {"identity.md", "Engineering"}},
		"mkt":   {{"b.md", "sales"}, {"a.md", "marketing"}},
		"bad":   {{"memory.md", "not a domain"}},
		"prefs": {{"memory.md", ""}},
		"ops":   {{"memory.md", "operations"}},
	}
	for w, fs := range files {
		for i, f := range fs {
			src := Source{Path: "/hive/agents/" + w + "/" + f.file, Agent: w, Frontmatter: map[string]string{"domain": f.domain}, Governed: govern.Version}
			if _, err := p.ApplySource(ctx, w, src, []Note{note(w+f.file, "", "a fact", i+1)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]string{"eng": "engineering", "mkt": "marketing", "bad": "global", "prefs": "global", "ops": "writing"}
	assigned := map[string]string{"ops": "writing"}
	if got := p.WingDomains(assigned); !maps.Equal(got, want) {
		t.Errorf("WingDomains = %v, want %v", got, want)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	re := openT(t, dir, nil, true)
	if got := re.WingDomains(assigned); !maps.Equal(got, want) {
		t.Errorf("reopened: WingDomains = %v, want %v", got, want)
	}
	if thawed := re.WholeWings(); len(thawed) > 0 {
		t.Errorf("reading the domains thawed %v", thawed)
	}

	tests := []struct {
		name    string
		scope   DomainScope
		want    []string // nil: every wing
		wantErr error
	}{
		{"a person", DomainScope{}, nil, nil},
		{"an agent", DomainScope{Caller: "eng"}, []string{"bad", "eng", "prefs"}, nil},
		{"an agent, every domain", DomainScope{Caller: "eng", AllDomains: true}, nil, nil},
		{"an agent of global", DomainScope{Caller: "prefs"}, nil, nil},
		{"an agent not mined yet", DomainScope{Caller: "new"}, nil, nil},
		{"an agent not mined yet, assigned", DomainScope{Caller: "new", Assigned: map[string]string{"new": "marketing"}}, []string{"bad", "mkt", "prefs"}, nil},
		{"an assignment moves a wing", DomainScope{Caller: "eng", Assigned: map[string]string{"prefs": "marketing"}}, []string{"bad", "eng"}, nil},
		{"a person narrows", DomainScope{Domain: "marketing"}, []string{"bad", "mkt", "prefs"}, nil},
		{"global alone", DomainScope{Domain: "global"}, []string{"bad", "prefs"}, nil},
		{"an agent's own domain", DomainScope{Caller: "eng", Domain: "engineering"}, []string{"bad", "eng", "prefs"}, nil},
		{"an agent looks outside", DomainScope{Caller: "eng", Domain: "marketing"}, nil, ErrOutsideDomain},
		{"an agent looks outside, widened", DomainScope{Caller: "eng", Domain: "marketing", AllDomains: true}, []string{"bad", "mkt", "prefs"}, nil},
		{"no such domain", DomainScope{Domain: "sales"}, nil, ErrUnknownDomain},
		{"no domain name", DomainScope{Domain: "a b"}, nil, ErrUnknownDomain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := re.ScopeWings(tt.scope)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if tt.want == nil != sc.All() || tt.want != nil && !slices.Equal(sc.Wings, tt.want) {
				t.Errorf("sees %v (all: %t), want %v", sc.Wings, sc.All(), tt.want)
			}
		})
	}
}
