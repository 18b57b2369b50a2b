package local

import (
	"errors"
	"io/fs"
	"os"

	"github.com/memminer/memminer/api"
	"github.com/memminer/memminer/inbox"
	"github.com/memminer/memminer/palace"
)

// BuildStatus describes p the way `memminer status` prints it when no
// daemon runs; a daemon adds its part on top. modelSpec is the configured
// model and modelErr why it is unavailable, if it is.
func BuildStatus(p *palace.Palace, modelSpec, modelErr string, enabled bool) api.Status {
	st := api.Status{
		Available:   modelErr == "",
		Enabled:     enabled,
		Model:       modelSpec,
		ModelError:  optional(modelErr),
		Palace:      p.Dir(),
		PalaceBytes: p.Bytes(),
	}
	for _, w := range p.Wings() {
		ws := api.WingStatus{WingInfo: w, Orphaned: orphaned(w.Roots)}
		st.Wings = append(st.Wings, ws)
		st.Notes += w.Notes
	}
	if st.Wings == nil {
		st.Wings = []api.WingStatus{}
	}
	st.Initialized = len(st.Wings) > 0
	st.InboxPending = inbox.Count(p)
	st.PacksReviewNeeded = []string{}
	return st
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
