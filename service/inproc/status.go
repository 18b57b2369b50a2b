package inproc

import (
	"errors"
	"io/fs"
	"os"

	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/memory/secrets"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
)

// BuildStatus describes p the way `memminer status` prints it when no
// daemon runs; a daemon adds its part on top. modelSpec is the configured
// model and modelErr why it is unavailable, if it is; domains are the
// configuration's (palace.WingDomains).
func BuildStatus(p *palace.Palace, modelSpec, modelErr string, enabled bool, domains map[string]string) api.Status {
	st := api.Status{
		Available:   modelErr == "",
		Enabled:     enabled,
		Model:       modelSpec,
		ModelError:  optional(modelErr),
		Palace:      p.Dir(),
		PalaceBytes: p.Bytes(),
	}
	wingDomains := p.WingDomains(domains)
	for _, w := range p.Wings() {
		ws := api.WingStatus{WingInfo: w, Domain: wingDomains[w.ID], Orphaned: orphaned(w.Roots)}
		st.Wings = append(st.Wings, ws)
		st.Notes += w.Notes
	}
	if st.Wings == nil {
		st.Wings = []api.WingStatus{}
	}
	st.Initialized = len(st.Wings) > 0
	st.InboxPending = inbox.Count(p)
	for _, w := range p.Wings() {
		st.SecretsHidden += p.CountInTexts(w.ID, secrets.HiddenMark)
	}
	st.PacksReviewNeeded = []string{}
	return st
}

// HiddenSecret is a secret a memory file holds, stored hidden in the
// palace: its kind and where, never the secret.
type HiddenSecret struct {
	Wing string
	// Path is the file, Line the line where the secret starts (for one in
	// a heading, the line of the first note under it).
	Path string
	Line int
	Kind string
}

// HiddenSecrets lists the secrets hidden in p's notes (secrets.Hidden),
// by wing, file and line. A heading holding one is counted once, not for
// every note under it.
func HiddenSecrets(p *palace.Palace) []HiddenSecret {
	var out []HiddenSecret
	for _, w := range p.Wings() {
		lastHeading := map[string]string{} // file → the last heading counted
		for _, n := range p.Notes(w.ID) {
			if hs := secrets.Hidden(n.Heading); len(hs) > 0 && lastHeading[n.Source] != n.Heading {
				lastHeading[n.Source] = n.Heading
				for _, f := range hs {
					out = append(out, HiddenSecret{Wing: w.ID, Path: n.Source, Line: n.Line, Kind: f.Kind})
				}
			}
			for _, f := range secrets.Hidden(n.Text) {
				out = append(out, HiddenSecret{Wing: w.ID, Path: n.Source, Line: n.Line + f.Line - 1, Kind: f.Kind})
			}
		}
	}
	return out
}

// orphaned reports whether every root a wing was mined from is gone.
func orphaned(roots []string) bool {
	if len(roots) == 0 {
		return false
	}
	for _, r := range roots {
		if _, err := os.Stat(r); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return true
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
