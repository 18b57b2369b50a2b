package daemon

import (
	"context"
	"net/http"

	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

// handleInbox answers the inbox's items (api.Service.Inbox).
func (d *Daemon) handleInbox(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	wing, ok := wingParam(w, q.Get("wing"))
	if !ok {
		return
	}
	var items []inbox.Item
	var err error
	daemonclient.Working(w, func() {
		items, err = d.local().Inbox(r.Context(), api.InboxRequest{Wing: wing, All: q.Get("all") == "1"})
	})
	if err != nil {
		WriteErr(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, items)
}

// handleDecide approves or rejects an inbox item (api.Service.Decide) in
// the mine goroutine, as a remember is: the approval writes and mines.
func (d *Daemon) handleDecide(w http.ResponseWriter, r *http.Request) {
	var req api.DecideRequest
	if !readJSON(w, r, &req) || d.refuseOtherHive(w, req.Hive) {
		return
	}
	var res api.Decision
	ok, err := d.runCall(w, r, "deciding inbox item "+req.Ref, func(ctx context.Context) error {
		var err error
		res, err = d.local().Decide(ctx, req)
		if err == nil {
			d.log.Info("inbox item decided on request", "wing", res.Wing, "file", res.File, "line", res.Line, "decision", res.Decision)
		}
		return err
	})
	if !ok {
		return
	}
	if err != nil {
		eb := daemonclient.NewErrorBody(err)
		WriteJSON(w, statusOf(err), api.DecideReply{Result: res, Error: eb.Error, Code: eb.Code})
		return
	}
	WriteJSON(w, http.StatusOK, api.DecideReply{Result: res})
}
