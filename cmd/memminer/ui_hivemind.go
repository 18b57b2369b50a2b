package main

import (
	"net/http"
	"slices"

	"github.com/memminer/memminer/clients/preaction"
	"github.com/memminer/memminer/clients/skill"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/memory/secrets"
)

// skillsData is the skills page: the hive's skills by state, as skill
// list shows them, each with its SKILL.md, read only.
type skillsData struct {
	uiPage
	States []skillState
	// Problems are the skill folders whose SKILL.md is not valid.
	Problems []string
}

type skillState struct {
	State  string
	Skills []uiSkill
}

// uiSkill is a skill with its file named as output names it and its
// SKILL.md as shown: secrets hidden.
type uiSkill struct {
	skill.Skill
	File, Text string
}

// skillsPage lists the hive's skills, proposed, published and deprecated
// (skill.List, what skill list prints).
func (u *uiServer) skillsPage(w http.ResponseWriter, _ *http.Request) {
	d := skillsData{uiPage: u.page("Skills", "skills")}
	h, err := u.a.configuredHive()
	if err != nil {
		d.Errors = append(d.Errors, err.Error())
		u.render(w, "skills", d)
		return
	}
	all, problems, err := skill.List(h)
	if err != nil {
		d.Errors = append(d.Errors, err.Error())
	}
	for _, p := range problems {
		d.Problems = append(d.Problems, p.Error())
	}
	for _, state := range skill.States {
		st := skillState{State: state}
		for _, s := range all {
			if s.State != state {
				continue
			}
			us := uiSkill{Skill: s, File: u.a.sourceName(s.Path)}
			data, err := hivefile.ReadLimited(s.Path, skill.MaxBytes)
			if err != nil {
				d.Errors = append(d.Errors, us.File+": "+err.Error())
			}
			us.Text, _ = secrets.Hide(string(data))
			st.Skills = append(st.Skills, us)
		}
		d.States = append(d.States, st)
	}
	u.render(w, "skills", d)
}

// preActionData is the pre-action page: the log's entries as pre-action
// lists them, newest first.
type preActionData struct {
	uiPage
	Wing, Since string
	Wings       []string
	Entries     []preaction.Entry
}

// preActionPage lists the pre-action log's entries (of the form's wing,
// since its date), newest first, read only; commands and directories are
// shown with their secrets hidden.
func (u *uiServer) preActionPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := preActionData{uiPage: u.page("Pre-action log", "pre-action"), Wing: q.Get("wing"), Since: q.Get("since")}
	d.Wings = u.wingIDs(r.Context(), &d.uiPage)
	entries, problems, err := u.a.preActionEntries(d.Wing, d.Since)
	if err != nil {
		d.Errors = append(d.Errors, err.Error())
	}
	d.Errors = append(d.Errors, problems...)
	slices.Reverse(entries)
	d.Entries = entries
	u.render(w, "preaction", d)
}
