package main

import (
	"errors"
	"net/http"

	"github.com/memminer/memminer/githive"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/service/api"
)

// noteData is a note's page: what memminer show --history says of it, and
// the inbox markers its text carries.
type noteData struct {
	uiPage
	Ref  string
	Note *api.ShownNote
	// Marks are the confidence, risk and decision an inbox note's markers
	// say (govern.ReadInboxItem); empty for a note written to memory.
	Marks govern.InboxItem
	// NoHistory says why the note has no Git history to show: its file is
	// not in a Git work tree, or git is not installed.
	NoHistory string
}

// personView is the page's domain scope: the person sees every domain,
// whatever MEMMINER_WING the server was started with.
var personView = domainArgs{AllDomains: true}

// notePage shows one note (ref: a note id, or anything show takes) as
// memminer show does: heading path, the notes before and after it in its
// file, its governance and, when its file is in a Git work tree, the
// commits that touched it.
func (u *uiServer) notePage(w http.ResponseWriter, r *http.Request) {
	d := noteData{uiPage: u.page("Note", "memory"), Ref: r.URL.Query().Get("ref")}
	if d.Ref == "" {
		w.WriteHeader(http.StatusBadRequest)
		d.Errors = append(d.Errors, "no note asked for: open a note from a search")
		u.render(w, "note", d)
		return
	}
	// The note is asked for once; only its history may be missing.
	n, err := u.a.showNote(r.Context(), d.Ref, false, personView)
	if err == nil {
		var h []githive.Commit
		switch h, err = noteHistory(r.Context(), n); {
		case err == nil:
			n.History = h
		case errors.Is(err, githive.ErrNoGit):
			d.NoHistory, err = "git is not installed", nil
		case errors.Is(err, githive.ErrNotRepo):
			d.NoHistory, err = n.Source+" is not in a Git work tree", nil
		}
	}
	if err != nil {
		if errors.Is(err, api.ErrNoNote) {
			w.WriteHeader(http.StatusNotFound)
		}
		d.Errors = append(d.Errors, err.Error())
		u.render(w, "note", d)
		return
	}
	d.Note, d.Marks = &n, govern.ReadInboxItem(n.Text)
	u.render(w, "note", d)
}
