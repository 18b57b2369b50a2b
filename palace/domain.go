package palace

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memminer/memminer/hive"
)

// Errors of a domain scope.
var (
	// ErrUnknownDomain means DomainScope.Domain names a domain no wing is in.
	ErrUnknownDomain = errors.New("unknown domain")
	// ErrOutsideDomain means an agent asked for a wing or a domain outside
	// its own domain and global without widening its view (AllDomains).
	ErrOutsideDomain = errors.New("outside the caller's domain")
)

// DomainScope is which wings a caller sees by domain (docs/domains.md):
// a person (no Caller) sees every wing; an agent sees the wings of its
// own domain and of global, every wing with AllDomains; Domain narrows
// either to that domain and global. The zero value sees every wing.
type DomainScope struct {
	// Caller is the calling agent's wing; empty for a person.
	Caller string `json:"caller,omitempty"`
	// Domain narrows the view to this domain and global.
	Domain string `json:"domain,omitempty"`
	// AllDomains widens an agent's view to every domain.
	AllDomains bool `json:"all_domains,omitempty"`
	// Assigned are the domains the configuration gives wings (wing →
	// domain, hive.DomainAssignments); they win over a wing's frontmatter.
	Assigned map[string]string `json:"assigned,omitempty"`
}

// MayNarrow reports whether s may see fewer than every wing, which only
// the palace's wings and their domains tell: a palace opened for it must
// hold every wing (Options.Wings empty).
func (s DomainScope) MayNarrow() bool {
	return s.Domain != "" || s.Caller != "" && !s.AllDomains
}

// WingDomains returns the domain of every wing of the palace: the one
// assigned, else the first frontmatter domain: among its files (identity.md,
// then the memory files, then the others, each by path: hive.DomainRank),
// else hive.GlobalDomain. A value that is no domain name is passed over.
// It reads what was mined, never a wing's notes, so a search pays nothing
// for it.
func (p *Palace) WingDomains(assigned map[string]string) map[string]string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make(map[string]string, len(p.wings))
	for id, w := range p.wings {
		out[id] = w.domain(assigned)
	}
	return out
}

// domain is the wing's domain as WingDomains says. The caller holds the
// palace's read lock.
func (w *wing) domain(assigned map[string]string) string {
	if d, ok := assigned[w.id]; ok {
		return d
	}
	return w.declaredDomain()
}

// declaredDomain is the domain the wing's files declare, else global.
// The caller holds the palace's read lock.
func (w *wing) declaredDomain() string {
	type declared struct {
		rank   int
		path   string
		domain string
	}
	var best *declared
	consider := func(path string, fm map[string]string) {
		v := strings.TrimSpace(fm[hive.DomainKey])
		if v == "" {
			return
		}
		d, err := hive.NormalizeDomain(v)
		if err != nil {
			return
		}
		c := declared{hive.DomainRank(path), path, d}
		if best == nil || c.rank < best.rank || c.rank == best.rank && c.path < best.path {
			best = &c
		}
	}
	if w.fz != nil {
		for _, s := range w.fz.sources {
			consider(s.Path, s.Frontmatter)
		}
	} else {
		for _, s := range w.sources {
			consider(s.Path, s.Frontmatter)
		}
	}
	if best == nil {
		return hive.GlobalDomain
	}
	return best.domain
}

// Scope is what a DomainScope sees of a palace.
type Scope struct {
	// Domain is the domain seen besides global; empty when every wing is.
	Domain string
	// Wings are the wings seen, sorted; nil when every wing is.
	Wings []string
	// Domains is every wing's domain (WingDomains); nil when every wing is
	// seen.
	Domains map[string]string
}

// All reports whether the scope sees every wing.
func (sc Scope) All() bool { return sc.Domain == "" }

// Sees reports whether the scope sees wing.
func (sc Scope) Sees(wing string) bool {
	_, ok := slices.BinarySearch(sc.Wings, wing)
	return sc.All() || ok
}

// Outside is the error of wing, asked for by name, when the scope does
// not see it; it matches ErrOutsideDomain.
func (sc Scope) Outside(wing string) error {
	return fmt.Errorf("%w: wing %s is in domain %s, and this sees domains %s and %s only; --all-domains (without --domain) sees every domain",
		ErrOutsideDomain, wing, sc.Domains[wing], sc.Domain, hive.GlobalDomain)
}

// ScopeWings resolves s: what it sees of the palace. It is the one place
// a domain decides what a caller sees; search, wake-up and packs call it.
// A Domain no wing is in matches ErrUnknownDomain; an agent's Domain
// outside its own and global, without AllDomains, ErrOutsideDomain.
func (p *Palace) ScopeWings(s DomainScope) (Scope, error) {
	if !s.MayNarrow() {
		return Scope{}, nil
	}
	domains := p.WingDomains(s.Assigned)
	view := ""
	if s.Caller != "" && !s.AllDomains {
		view = domains[s.Caller]
		if view == "" { // a wing not mined yet
			view = hive.GlobalDomain
			if d, ok := s.Assigned[s.Caller]; ok {
				view = d
			}
		}
		if view == hive.GlobalDomain {
			view = "" // a wing of no domain sees every domain
		}
	}
	if s.Domain != "" {
		d, err := hive.NormalizeDomain(s.Domain)
		if err != nil {
			d = s.Domain // no domain name is any wing's domain
		}
		if d != hive.GlobalDomain && !slices.Contains(slices.Collect(maps.Values(domains)), d) {
			return Scope{}, unknownDomainError(d, domains)
		}
		if view != "" && d != view && d != hive.GlobalDomain {
			return Scope{}, fmt.Errorf("%w: wing %s is in domain %s, which sees %s and %s only; add --all-domains to look into domain %s",
				ErrOutsideDomain, s.Caller, view, view, hive.GlobalDomain, d)
		}
		view = d
	}
	if view == "" {
		return Scope{}, nil
	}
	sc := Scope{Domain: view, Wings: []string{}, Domains: domains}
	for id, d := range domains {
		if d == view || d == hive.GlobalDomain {
			sc.Wings = append(sc.Wings, id)
		}
	}
	slices.Sort(sc.Wings)
	return sc, nil
}

// unknownDomainError names the domains there are.
func unknownDomainError(d string, domains map[string]string) error {
	known := slices.Compact(slices.Sorted(maps.Values(domains)))
	if !slices.Contains(known, hive.GlobalDomain) {
		known = append(known, hive.GlobalDomain)
		slices.Sort(known)
	}
	return fmt.Errorf("%w %q (domains: %s)", ErrUnknownDomain, d, strings.Join(known, ", "))
}
