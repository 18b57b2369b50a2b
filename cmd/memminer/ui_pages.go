package main

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/recall/pack"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
)

// uiFuncs are the templates' helpers. Every one returns text, which
// html/template escapes: nothing a note holds becomes markup.
var uiFuncs = template.FuncMap{
	"when": when,
	"pct": func(f *float64) string {
		if f == nil {
			return "?"
		}
		return strconv.FormatFloat(*f, 'f', 0, 64) + "%"
	},
	"plural": plural,
	"plural64": func(n uint64, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	},
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	"conflictKind": conflictKindText,
	"diffClass": func(line string) string {
		switch {
		case strings.HasPrefix(line, "+"):
			return "add"
		case strings.HasPrefix(line, "-"):
			return "del"
		case strings.HasPrefix(line, "@@"):
			return "hunk"
		}
		return ""
	},
	"lines": func(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") },
}

// when is a time on the page: UTC to the minute, "never" when unset.
func when(t any) string {
	var at time.Time
	switch t := t.(type) {
	case time.Time:
		at = t
	case *time.Time:
		if t != nil {
			at = *t
		}
	}
	if at.IsZero() {
		return "never"
	}
	return at.UTC().Format("2006-01-02 15:04 UTC")
}

// overviewData is the overview page.
type overviewData struct {
	uiPage
	Status   api.Status
	Handoffs []wakeup.Handoff
}

// overview is the palace's status (what status --json says), with the
// open handoffs to every wing.
func (u *uiServer) overview(w http.ResponseWriter, r *http.Request) {
	a := u.a
	d := overviewData{uiPage: u.page("Overview", "overview")}
	st, err := a.status(r.Context())
	if err != nil {
		d.Errors = append(d.Errors, "status: "+err.Error())
	}
	a.attention(&st)
	d.Status = st
	d.Handoffs, err = a.openHandoffs(r.Context())
	if err != nil {
		d.Errors = append(d.Errors, "handoffs: "+err.Error())
	}
	u.render(w, "overview", d)
}

// openHandoffs are the open handoffs to every wing, read from the palace
// in this process as the inbox is (one pass, where a wake-up per wing
// would read every note once per wing), files named as output names them.
func (a *app) openHandoffs(ctx context.Context) ([]wakeup.Handoff, error) {
	p, err := a.readPalace(ctx)
	if err != nil || p == nil {
		return nil, err
	}
	defer p.Close()
	hs := wakeup.OpenHandoffs(p)
	for i := range hs {
		hs[i].Source = hive.SourceName(a.hive(), hs[i].Path)
	}
	return hs, nil
}

// inboxData is the inbox page: the pending items, then the decided ones.
type inboxData struct {
	uiPage
	Pending, Decided []inbox.Item
	By               string
}

func (u *uiServer) inboxPage(w http.ResponseWriter, r *http.Request) {
	d := inboxData{uiPage: u.page("Inbox", "inbox"), By: u.a.whoAmI()}
	items, err := u.a.inboxItems(r.Context(), "", true)
	if err != nil {
		d.Errors = append(d.Errors, err.Error())
	}
	for _, it := range items {
		if it.State == inbox.Pending {
			d.Pending = append(d.Pending, it)
		} else {
			d.Decided = append(d.Decided, it)
		}
	}
	slices.Reverse(d.Decided) // the latest first
	u.render(w, "inbox", d)
}

// uiResult is the answer to a state change: what happened to each item.
type uiResult struct {
	Results []uiOutcome `json:"results"`
}

type uiOutcome struct {
	// Ref is the inbox item's ref or the conflict copy's path.
	Ref string `json:"ref"`
	OK  bool   `json:"ok"`
	// Message says what was done, or why not.
	Message string `json:"message"`
}

// answer writes res as JSON: 200 when every item went through, 422 when
// some did not.
func answer(w http.ResponseWriter, res uiResult) {
	code := http.StatusOK
	if slices.ContainsFunc(res.Results, func(o uiOutcome) bool { return !o.OK }) {
		code = http.StatusUnprocessableEntity
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(res)
}

// inboxDecide approves or rejects the items ref names (one or several),
// each as memminer inbox approve or reject does, with the note given.
func (u *uiServer) inboxDecide(w http.ResponseWriter, r *http.Request) {
	action, refs := r.PostForm.Get("action"), r.PostForm["ref"]
	if (action != "approve" && action != "reject") || len(refs) == 0 {
		http.Error(w, "memminer ui: want action=approve or reject and at least one ref", http.StatusBadRequest)
		return
	}
	d := inbox.Decision{By: u.a.whoAmI(), Note: r.PostForm.Get("note"), Now: time.Now()}
	var res uiResult
	for _, ref := range refs {
		dec, err := u.a.decide(r.Context(), ref, d, action == "approve")
		var msg string
		if dec.Decision != "" {
			msg = dec.message()
		}
		o := uiOutcome{Ref: ref, OK: msg != "", Message: msg}
		if err != nil {
			o.Message = strings.TrimSpace(msg + " " + err.Error())
		}
		res.Results = append(res.Results, o)
	}
	answer(w, res)
}

// conflictsData is the conflicts page: the open copies and what merging
// each would do, as conflicts merge without --apply says.
type conflictsData struct {
	uiPage
	List   conflicts.List
	Merges []uiMerge
}

// uiMerge is one copy's merge with its paths as the page names them
// (CopyName, OriginalName) beside the copy's own path, which the apply
// form sends back.
type uiMerge struct {
	conflicts.CopyMerge
	CopyName, OriginalName string
}

func (u *uiServer) conflictsPage(w http.ResponseWriter, r *http.Request) {
	d := conflictsData{uiPage: u.page("Conflicts", "conflicts")}
	l, err := u.a.openConflicts(r.Context(), "")
	if err != nil {
		d.Errors = append(d.Errors, err.Error())
	}
	if l.ScanError != nil {
		d.Errors = append(d.Errors, "the scan was incomplete, conflicts may be missing: "+*l.ScanError)
	}
	d.List = l
	if len(l.Conflicts) > 0 {
		rep, err := u.a.mergeConflicts(r.Context(), conflicts.MergeRequest{})
		if err != nil {
			d.Errors = append(d.Errors, err.Error())
		}
		for _, m := range rep.Merges {
			d.Merges = append(d.Merges, uiMerge{CopyMerge: m, CopyName: hive.SourceName(u.a.hive(), m.Copy), OriginalName: hive.SourceName(u.a.hive(), m.Original)})
		}
	}
	u.render(w, "conflicts", d)
}

// conflictsMerge applies the merge of one copy (the form's copy: its
// path, which must be an open copy's): with its conflicts marked when
// accept_conflicts is set, and with the removals the person ticked, one
// by one, each by the review the page showed with it: the merge carries
// out those and no other, and refuses a copy whose removals are no longer
// the ones reviewed, as conflicts merge --reviewed does.
func (u *uiServer) conflictsMerge(w http.ResponseWriter, r *http.Request) {
	copyName := r.PostForm.Get("copy")
	if copyName == "" {
		http.Error(w, "memminer ui: want copy=PATH", http.StatusBadRequest)
		return
	}
	reviewed := slices.DeleteFunc(r.PostForm["reviewed"], func(s string) bool { return s == "" })
	req := conflicts.MergeRequest{
		Paths:           []string{copyName},
		Apply:           true,
		AcceptConflicts: r.PostForm.Get("accept_conflicts") != "",
		AcceptRemovals:  len(reviewed) > 0,
		Reviewed:        reviewed,
	}
	rep, err := u.a.mergeConflicts(r.Context(), req)
	if err != nil {
		answer(w, uiResult{Results: []uiOutcome{{Ref: copyName, Message: err.Error()}}})
		return
	}
	var res uiResult
	for _, m := range rep.Merges {
		o := uiOutcome{Ref: hive.SourceName(u.a.hive(), m.Copy), OK: m.Applied}
		switch {
		case m.Applied:
			o.Message = "merged into " + hive.SourceName(u.a.hive(), m.Original) + removedText(m) + "; the copy is removed, kept with the file's previous content in " + deref(m.Backup)
		case m.Error != nil:
			o.Message = "not merged: " + *m.Error
		default:
			o.Message = "not merged: " + m.Status
		}
		res.Results = append(res.Results, o)
	}
	answer(w, res)
}

// removedText says what an applied merge removed, when it removed something.
func removedText(m conflicts.CopyMerge) string {
	if len(m.Removed) == 0 {
		return ""
	}
	return ", removing " + strconv.Itoa(len(m.Removed)) + " " + plural(len(m.Removed), "note", "notes")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// packsData is the packs page: every pack with its state, as pack --list
// shows it.
type packsData struct {
	uiPage
	Packs []packRow
	By    string
}

func (u *uiServer) packsPage(w http.ResponseWriter, _ *http.Request) {
	d := packsData{uiPage: u.page("Packs", "packs"), By: u.a.whoAmI()}
	if u.a.cfg.Hive == "" {
		d.Errors = append(d.Errors, errNoHive().Error())
	} else if rows, err := u.a.packRows(); err != nil {
		d.Errors = append(d.Errors, err.Error())
	} else {
		d.Packs = rows
	}
	u.render(w, "packs", d)
}

// packsMark adds a mark (good, bad or reviewed) to a pack's log, as
// memminer pack NAME --mark does.
func (u *uiServer) packsMark(w http.ResponseWriter, r *http.Request) {
	name := r.PostForm.Get("name")
	o := uiOutcome{Ref: name}
	kind, err := pack.ParseMark(r.PostForm.Get("kind"))
	if err == nil && u.a.cfg.Hive == "" {
		err = errNoHive()
	}
	if err == nil {
		o.Message, err = u.a.packMark(r.Context(), name, pack.Mark{Time: time.Now(), Kind: kind, By: u.a.whoAmI(), Note: r.PostForm.Get("note")})
	}
	o.OK = err == nil
	if err != nil {
		o.Message = err.Error()
	}
	answer(w, uiResult{Results: []uiOutcome{o}})
}

// memoryData is the memory page: a search as memminer search runs it.
type memoryData struct {
	uiPage
	Query, Wing, Status, Tag, Since string
	Wings, Statuses                 []string
	Hits                            []api.Hit
	// Explain asks for search --explain's view: each hit's evidence, the
	// query's words and the near misses (Explanation).
	Explain     bool
	Explanation *api.Explanation
}

// wingIDs are the palace's wings, for a page's wing filter; what could not
// be read is said in page's errors.
func (u *uiServer) wingIDs(ctx context.Context, page *uiPage) []string {
	wings, err := u.a.service().Wings(ctx)
	if err != nil {
		page.Errors = append(page.Errors, err.Error())
	}
	var ids []string
	for _, wi := range wings {
		ids = append(ids, wi.ID)
	}
	return ids
}

// uiResults is how many hits the memory page shows.
const uiResults = 20

// memoryPage searches memory with the query and filters of its form, through
// the search the command runs (a.search: the one service, the relevance
// decision, the governed defaults).
func (u *uiServer) memoryPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := memoryData{uiPage: u.page("Memory", "memory"), Query: strings.TrimSpace(q.Get("q")), Wing: q.Get("wing"),
		Status: q.Get("status"), Tag: q.Get("tag"), Since: q.Get("since"), Statuses: []string{"approved", "stale", "superseded"},
		Explain: q.Get("explain") != ""}
	d.Wings = u.wingIDs(r.Context(), &d.uiPage)
	if d.Query != "" {
		args := searchArgs{Query: d.Query, Results: uiResults, Status: d.Status, Since: d.Since, Explain: d.Explain}
		if d.Wing != "" {
			args.Wing = wingList{d.Wing}
		}
		if d.Tag != "" {
			args.Tags = []string{d.Tag}
		}
		out, err := api.SearchResult{}, error(nil)
		if d.Status != "" {
			_, err = govern.ParseStatus(d.Status)
		}
		if err == nil {
			out, err = u.a.search(r.Context(), args)
		}
		if err != nil {
			d.Errors = append(d.Errors, err.Error())
		}
		d.Hits, d.Explanation = out.Results, out.Explanation
		if d.Explanation != nil {
			for i := range d.Explanation.NearMisses {
				h := &d.Explanation.NearMisses[i]
				h.Source = u.a.sourceName(h.Path)
			}
		}
	}
	u.render(w, "memory", d)
}
