package daemon

import (
	"context"
	"net/http"

	"github.com/memminer/memminer/recall/catalog"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/daemonclient"
)

func (d *Daemon) handleIndex(w http.ResponseWriter, r *http.Request) {
	// Its time grows with the wings (5.5 s for 3,000): the client is told
	// the daemon is at work, so it waits rather than building it again.
	var x catalog.Index
	var err error
	daemonclient.Working(w, func() { x, err = d.local().Index(r.Context()) })
	if err != nil {
		WriteErr(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, x)
}

// refreshIndex rewrites HIVE/INDEX.md when the catalog changed.
func (d *Daemon) refreshIndex(ctx context.Context) {
	x, err := catalog.Build(d.p, d.opts.Hive, d.opts.Agents, wakeup.ReadFileLimited, d.opts.Domains)
	if err == nil {
		var wrote bool
		if wrote, err = catalog.Write(ctx, d.opts.Hive, x); wrote {
			d.log.Info("index rewritten", "path", catalog.FileName)
		}
	}
	if err != nil {
		d.log.Warn("index not written", "err", err)
	}
}
