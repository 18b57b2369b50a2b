package conflicts

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/palace"
)

// Routes implements daemon.Router: GET /conflicts[?wing=ID] answers a List.
//
// The answer reflects the hive at the time of the request, whether or not
// Syncthing's events are followed: the wing's agent directories (the whole
// hive without a wing) are walked first and the registry reconciled with
// what is there, so a copy made a moment ago is listed (and alerted, once,
// as any new conflict) and a deleted one is resolved. A wing that is
// neither a wing of the palace nor an agent directory of the hive is
// refused with 404 and code unknown_wing, naming the known wings.
//
// POST /conflicts/merge takes a MergeRequest and answers a MergeReport
// (see MergeCopies): the copies are those GET /conflicts lists for the
// wing, limited to the request's paths; a path that matches none is
// refused with 404 and code no_copy.
func (c *Component) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /conflicts", c.handleList)
	mux.HandleFunc("POST /conflicts/merge", c.handleMerge)
}

func (c *Component) handleMerge(w http.ResponseWriter, r *http.Request) {
	var req MergeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		daemon.WriteError(w, http.StatusBadRequest, "bad_request", "merge request: "+err.Error())
		return
	}
	if req.Wing != "" {
		nw, err := palace.NormalizeWingID(req.Wing)
		if err != nil {
			daemon.WriteError(w, http.StatusBadRequest, "bad_request", "wing: "+err.Error())
			return
		}
		req.Wing = nw
	}
	select {
	case <-c.ready:
	case <-r.Context().Done():
		return
	}
	if req.Wing != "" {
		if err := c.checkWing(req.Wing); err != nil {
			daemon.WriteErr(w, err)
			return
		}
	}
	c.scan(r.Context(), req.Wing, requestLookupTimeout)
	sel, err := Select(c.List().Wing(req.Wing), req.Paths)
	if err != nil {
		daemon.WriteErr(w, err)
		return
	}
	daemon.WriteJSON(w, http.StatusOK, c.merge(r.Context(), sel, req))
}

// merge merges the copies with the daemon's palace for bases, and, when
// something was applied, reconciles the registry with the disk at once.
func (c *Component) merge(ctx context.Context, sel []Conflict, req MergeRequest) MergeReport {
	c.mu.Lock()
	h := c.host
	c.mu.Unlock()
	var p *palace.Palace
	dir := ""
	if h != nil {
		if p = h.Palace(); p != nil {
			dir = p.Dir()
		}
	}
	rep := MergeCopies(ctx, p, sel, MergeOptions{Apply: req.Apply, AcceptConflicts: req.AcceptConflicts, AcceptRemovals: req.AcceptRemovals, Reviewed: req.Reviewed, PalaceDir: dir, MaxFileBytes: c.opts.MaxFileBytes})
	if req.Apply {
		c.scan(ctx, "", requestLookupTimeout)
	}
	return rep
}

func (c *Component) handleList(w http.ResponseWriter, r *http.Request) {
	wing := r.URL.Query().Get("wing")
	if wing != "" {
		nw, err := palace.NormalizeWingID(wing)
		if err != nil {
			daemon.WriteError(w, http.StatusBadRequest, "bad_request", "wing: "+err.Error())
			return
		}
		wing = nw
	}
	select {
	case <-c.ready:
	case <-r.Context().Done():
		return
	}
	if wing != "" {
		if err := c.checkWing(wing); err != nil {
			daemon.WriteErr(w, err)
			return
		}
	}
	scanErr := c.scan(r.Context(), wing, requestLookupTimeout)
	if r.Context().Err() != nil {
		return
	}
	l := c.List().Wing(wing)
	if scanErr != nil {
		l.ScanError = new(scanErr.Error())
	}
	daemon.WriteJSON(w, http.StatusOK, l)
}

// checkWing returns an error matching palace.ErrUnknownWing when wing is
// neither a wing of the palace nor an agent directory of the hive
// (KnownWing).
func (c *Component) checkWing(wing string) error {
	c.mu.Lock()
	h, reg := c.host, c.reg
	c.mu.Unlock()
	if h == nil || reg == nil {
		return nil // Run failed early; the list is empty anyway
	}
	p := h.Palace()
	return KnownWing(wing, reg.hive, Wings{
		Has: func(wing string) (bool, error) { return p != nil && p.HasWing(wing), nil },
		All: func() ([]string, error) {
			var ids []string
			if p != nil {
				for _, wi := range p.Wings() {
					ids = append(ids, wi.ID)
				}
			}
			return ids, nil
		},
	})
}
