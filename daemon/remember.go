package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

func (d *Daemon) handleRemember(w http.ResponseWriter, r *http.Request) {
	var req api.RememberRequest
	if !readJSON(w, r, &req) || d.refuseOtherHive(w, req.Hive) {
		return
	}
	var res remember.Result
	ok, err := d.runCall(w, r, "remembering a note of wing "+req.Wing, func(ctx context.Context) error {
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
	})
	if !ok {
		return
	}
	if err != nil {
		eb := daemonclient.NewErrorBody(err)
		WriteJSON(w, statusOf(err), api.RememberReply{Result: res, Error: eb.Error, Code: eb.Code, SupersedesRef: eb.SupersedesRef})
		return
	}
	WriteJSON(w, http.StatusOK, api.RememberReply{Result: res})
}

// refuseOtherHive answers a write of another hive than the daemon's with
// ErrOtherHive (it would write into the wrong tree), and reports whether
// it did.
func (d *Daemon) refuseOtherHive(w http.ResponseWriter, hive string) bool {
	if sameResolvedPath(hive, d.opts.Hive) {
		return false
	}
	WriteError(w, http.StatusConflict, daemonclient.CodeOtherHive,
		fmt.Sprintf("%v: the daemon serving this palace mines hive %s, not %s", api.ErrOtherHive, d.opts.Hive, hive))
	return true
}

// runCall runs f in the mine goroutine, as the call job what, and
// returns its error. f's context ends when the daemon stops or the
// caller gives up. ok is false when there is nothing left to answer: the
// daemon is shutting down (answered here) or the caller gave up.
func (d *Daemon) runCall(w http.ResponseWriter, r *http.Request, what string, f func(context.Context) error) (ok bool, err error) {
	j := &callJob{what: what, done: make(chan error, 1)}
	j.run = func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer context.AfterFunc(r.Context(), cancel)()
		defer cancel()
		return f(ctx)
	}
	if !d.q.addCall(j) {
		WriteErr(w, fmt.Errorf("%w: the daemon is shutting down", api.ErrNotRunning))
		return false, nil
	}
	select {
	case err = <-j.done:
		return true, err
	case <-r.Context().Done():
		return false, nil
	}
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
