package daemon

import (
	"context"
	"fmt"
	"net/http"

	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

func (d *Daemon) handleForget(w http.ResponseWriter, r *http.Request) {
	var req api.ForgetRequest
	if !readJSON(w, r, &req) {
		return
	}
	wing, err := palace.NormalizeWingID(req.Wing)
	if err != nil {
		WriteError(w, http.StatusBadRequest, daemonclient.CodeBadRequest, err.Error())
		return
	}
	var out mine.Forgotten
	j := &callJob{what: "forgetting wing " + wing, done: make(chan error, 1)}
	j.run = func(context.Context) error {
		if err := r.Context().Err(); err != nil {
			return err
		}
		var err error
		out, err = d.local().Forget(r.Context(), api.ForgetRequest{Wing: wing, Force: req.Force, DryRun: req.DryRun})
		if err == nil && !req.DryRun {
			d.forgot(wing)
		}
		return err
	}
	if !d.q.addCall(j) {
		WriteErr(w, fmt.Errorf("%w: the daemon is shutting down", api.ErrNotRunning))
		return
	}
	select {
	case err = <-j.done:
	case <-r.Context().Done():
		return
	}
	if err != nil {
		WriteErr(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, out)
}

// forgot drops what the daemon remembers of a wing it no longer has.
func (d *Daemon) forgot(wing string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.lastMine, wing)
	d.failures.drop(func(_ string, f *failure) bool { return f.Wing == wing })
	d.reembedFailures.clear(wing)
	d.log.Info("forgot wing on request", "wing", wing)
}
