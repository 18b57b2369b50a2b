package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/memminer/memminer/api"
	"github.com/memminer/memminer/remember"
	"github.com/memminer/memminer/socket"
)

func (d *Daemon) handleRemember(w http.ResponseWriter, r *http.Request) {
	var req api.RememberRequest
	if !readJSON(w, r, &req) {
		return
	}
	if !sameResolvedPath(req.Hive, d.opts.Hive) {
		WriteError(w, http.StatusConflict, socket.CodeOtherHive,
			fmt.Sprintf("%v: the daemon serving this palace mines hive %s, not %s", api.ErrOtherHive, d.opts.Hive, req.Hive))
		return
	}
	var res remember.Result
	j := &callJob{what: "remembering a note of wing " + req.Wing, done: make(chan error, 1)}
	j.run = func(ctx context.Context) error {
		// The write stops when the daemon stops or the caller gives up.
		ctx, cancel := context.WithCancel(ctx)
		defer context.AfterFunc(r.Context(), cancel)()
		defer cancel()
		start := time.Now()
		var err error
		res, err = d.local().Remember(ctx, req)
		d.metrics.observeRemember(time.Since(start), err)
		switch {
		case err == nil:
			d.log.Info("remembered on request", "wing", res.Wing, "file", res.File, "line", res.Line, "added", res.Added)
		case errors.Is(err, remember.ErrNotMined):
			d.log.Warn("remembered on request but not mined", "wing", res.Wing, "file", res.File, "line", res.Line, "err", err)
		default:
			d.log.Warn("remember request refused", "wing", req.Wing, "reason", err)
		}
		return err
	}
	if !d.q.addCall(j) {
		WriteErr(w, fmt.Errorf("%w: the daemon is shutting down", api.ErrNotRunning))
		return
	}
	var err error
	select {
	case err = <-j.done:
	case <-r.Context().Done():
		return
	}
	if err != nil {
		eb := socket.NewErrorBody(err)
		WriteJSON(w, statusOf(err), api.RememberReply{Result: res, Error: eb.Error, Code: eb.Code, SupersedesRef: eb.SupersedesRef})
		return
	}
	WriteJSON(w, http.StatusOK, api.RememberReply{Result: res})
}

// sameResolvedPath reports whether a and b are one path once made
// absolute and their symlinks resolved; a path that does not resolve (not
// there) is compared as it is.
func sameResolvedPath(a, b string) bool {
	if a == b {
		return true
	}
	resolve := func(p string) string {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return p
	}
	return resolve(a) == resolve(b)
}
