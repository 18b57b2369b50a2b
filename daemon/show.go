package daemon

import (
	"net/http"

	"github.com/memminer/memminer/service/api"
)

// handleShow answers one note (api.Service.Show) from the daemon's palace.
func (d *Daemon) handleShow(w http.ResponseWriter, r *http.Request) {
	var req api.ShowRequest
	if !readJSON(w, r, &req) {
		return
	}
	n, err := d.local().Show(r.Context(), req)
	if err != nil {
		WriteErr(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, n)
}
