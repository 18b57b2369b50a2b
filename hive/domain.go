package hive

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// GlobalDomain is the domain of a wing that declares none: company rules,
// the user's preferences. Every domain sees it (docs/domains.md).
const GlobalDomain = "global"

// DomainKey is the frontmatter key that declares a wing's domain.
const DomainKey = "domain"

// IdentityFile is the name of an agent's identity file, beside its
// memory.md: the first place its wing's identity and domain are read.
const IdentityFile = "identity.md"

// ErrBadDomain is matched by the error of a name that is no domain.
var ErrBadDomain = errors.New("not a valid domain")

// NormalizeDomain case-folds name and checks it is a domain name: the
// characters of a wing id (NormalizeWingID). Its error matches
// ErrBadDomain.
func NormalizeDomain(name string) (string, error) {
	d, err := NormalizeWingID(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrBadDomain, strings.Replace(err.Error(), "wing id", "domain", 1))
	}
	return d, nil
}

// ParseDomainAssignment reads one entry of the domains setting,
// WING=DOMAIN, into the wing id and the domain, both normalised.
func ParseDomainAssignment(s string) (wing, domain string, err error) {
	w, d, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("%w: %q is not WING=DOMAIN", ErrBadDomain, s)
	}
	if wing, err = NormalizeWingID(w); err != nil {
		return "", "", fmt.Errorf("%q: %w", s, err)
	}
	if domain, err = NormalizeDomain(d); err != nil {
		return "", "", fmt.Errorf("%q: %w", s, err)
	}
	return wing, domain, nil
}

// DomainAssignments reads the domains setting into wing → domain; a wing
// named twice takes its last domain, and an entry that is no WING=DOMAIN
// (which the setting refuses) is passed over.
func DomainAssignments(entries []string) map[string]string {
	if len(entries) == 0 {
		return nil
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		if w, d, err := ParseDomainAssignment(e); err == nil {
			out[w] = d
		}
	}
	return out
}

// DomainRank orders the files of a wing by where its domain is read
// first: identity.md (0), then the memory files (1), then the others (2).
func DomainRank(path string) int {
	switch base := filepath.Base(path); {
	case strings.EqualFold(base, IdentityFile):
		return 0
	case IsMainMemoryFile(base):
		return 1
	}
	return 2
}
