package daemon

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/daemonclient"
)

// ConflictsComponent runs the conflict registry (package conflicts) in the
// daemon: a Component, Scanner, StatusReporter and ConflictCounter, and a
// Router serving the service's open conflicts and their merge:
//
//	GET  /conflicts        ?wing=ID → conflicts.List
//	POST /conflicts/merge  conflicts.MergeRequest → conflicts.MergeReport
//
// A wing neither the palace nor the hive has is 404 unknown_wing; a merge
// path that is no open copy nor a file with one is 404 no_copy.
type ConflictsComponent struct {
	*conflicts.Component
}

// Run runs the registry until ctx is done.
func (c ConflictsComponent) Run(ctx context.Context, h *Host) error {
	return c.Component.Run(ctx, h)
}

// Scanned walks the hive for conflict copies after the daemon's scan.
func (c ConflictsComponent) Scanned(ctx context.Context, h *Host) {
	c.Component.Scanned(ctx, h)
}

// Routes serves GET /conflicts and POST /conflicts/merge.
func (c ConflictsComponent) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /conflicts", c.handleList)
	mux.HandleFunc("POST /conflicts/merge", c.handleMerge)
}

func (c ConflictsComponent) handleList(w http.ResponseWriter, r *http.Request) {
	wing, ok := wingParam(w, r.URL.Query().Get("wing"))
	if !ok {
		return
	}
	l, err := c.Conflicts(r.Context(), wing)
	switch {
	case r.Context().Err() != nil:
	case err != nil:
		WriteErr(w, err)
	default:
		WriteJSON(w, http.StatusOK, l)
	}
}

func (c ConflictsComponent) handleMerge(w http.ResponseWriter, r *http.Request) {
	var req conflicts.MergeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBody)).Decode(&req); err != nil {
		WriteError(w, http.StatusBadRequest, daemonclient.CodeBadRequest, "merge request: "+err.Error())
		return
	}
	wing, ok := wingParam(w, req.Wing)
	if !ok {
		return
	}
	req.Wing = wing
	rep, err := c.MergeConflicts(r.Context(), req)
	switch {
	case r.Context().Err() != nil:
	case err != nil:
		WriteErr(w, err)
	default:
		WriteJSON(w, http.StatusOK, rep)
	}
}

// wingParam normalizes a request's wing ("" stays ""); a wing id that
// cannot be one is answered 400 bad_request.
func wingParam(w http.ResponseWriter, wing string) (string, bool) {
	if wing == "" {
		return "", true
	}
	nw, err := palace.NormalizeWingID(wing)
	if err != nil {
		WriteError(w, http.StatusBadRequest, daemonclient.CodeBadRequest, "wing: "+err.Error())
		return "", false
	}
	return nw, true
}
