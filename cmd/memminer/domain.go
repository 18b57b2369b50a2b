package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/palace"
)

// domainArgs are the domain flags of search, recall, wake-up and pack.
// An MCP client gives all_domains alone: every byte of a tool's schema
// is paid in every session's context.
type domainArgs struct {
	AllDomains bool   `json:"all_domains,omitempty" jsonschema:"other domains too"`
	Domain     string `json:"-"`
}

// domainFlags gives a command the domain flags.
func domainFlags(f *pflag.FlagSet, d *domainArgs) {
	f.BoolVar(&d.AllDomains, "all-domains", false, "an agent (MEMMINER_WING, --wing of a hook) sees every domain, not only its own and global")
	f.StringVar(&d.Domain, "domain", "", "only the wings of domain `NAME` and of global")
}

// domainScope is what the caller sees by domain: the agent the command
// runs for (the wing setting: MEMMINER_WING, the MCP server's or a hook's
// --wing), the configuration's domains and the flags d. A person's command
// has no wing and sees every domain.
func (a *app) domainScope(d domainArgs) (palace.DomainScope, error) {
	s := palace.DomainScope{AllDomains: d.AllDomains}
	if a.cfg.Wing != "" {
		w, err := normalizeWing(a.cfg.Wing)
		if err != nil {
			return s, err
		}
		s.Caller = w
	}
	if d.Domain != "" {
		dom, err := hive.NormalizeDomain(d.Domain)
		if err != nil {
			return s, usagef("--domain: %v", err)
		}
		s.Domain = dom
	}
	s.Assigned = a.domainAssignments()
	return s, nil
}

// domainAssignments are the domains setting's, wing → domain.
func (a *app) domainAssignments() map[string]string { return hive.DomainAssignments(a.cfg.Domains) }

// isDomainError reports whether err is a domain scope's refusal, which a
// command reports as a usage error.
func isDomainError(err error) bool {
	return errors.Is(err, palace.ErrUnknownDomain) || errors.Is(err, palace.ErrOutsideDomain)
}
