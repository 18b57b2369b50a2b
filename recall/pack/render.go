package pack

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
)

// DefaultTokens is a rendering's budget when Options.Tokens is zero: the
// wake-up digest's.
const DefaultTokens = wakeup.DefaultTokens

// ErrStale is matched by a *StaleError.
var ErrStale = errors.New("pack uses stale files")

// StaleError is a pack with block_stale: true that uses stale files: it is
// not rendered.
type StaleError struct {
	Pack     string
	Warnings []Warning
}

func (e *StaleError) Error() string {
	var files []string
	for _, w := range e.Warnings {
		files = append(files, w.File+" ("+w.Reason+")")
	}
	return fmt.Sprintf("pack %s blocks on stale files (block_stale: true): %s", e.Pack, strings.Join(files, ", "))
}

// Is makes a *StaleError match ErrStale.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// Options configure Render.
type Options struct {
	// Tokens is the hard budget of the text rendering (wakeup's estimate);
	// zero means DefaultTokens.
	Tokens int
	// Now is when staleness is measured; zero means time.Now().
	Now time.Time
	// StaleAfter is the hive's stale_after, used when the pack gives none;
	// zero means govern.DefaultStaleAfter.
	StaleAfter time.Duration
	// IncludeInbox lets unapproved notes (waiting in an inbox) in, marked.
	IncludeInbox bool
	// Hive is the hive directory, which file: entries are relative to.
	Hive string
	// Name names a note's file in the output (hive.SourceName); nil
	// keeps the absolute path.
	Name func(path string) string
	// Sees reports whether the caller's domain scope sees a wing
	// (palace.Scope.Sees): the notes of a wing it does not see are left
	// out whatever entry names them. Nil sees every wing.
	Sees func(wing string) bool
	// Search returns the ids of the notes a query: entry brings, best
	// first, searched as search does (governed, with IncludeInbox).
	Search func(ctx context.Context, query string) ([]string, error)
	// State is the pack's validation state, which the rendering reports.
	State State
}

// Warning is something wrong with a pack or a file it uses.
type Warning struct {
	// Kind is one of the Warn* kinds.
	Kind string `json:"kind"`
	// File is the file warned of, relative to the hive.
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// Kinds of warning.
const (
	WarnStale        = "stale"         // a file it uses is older than stale_after, or past its review date
	WarnPackReview   = "pack_review"   // the pack's own review_date has passed
	WarnReviewNeeded = "review_needed" // ReviewAfter bad marks in a row
	WarnMissing      = "missing"       // a file: entry names no mined file
)

// Item is one note of a rendering, with the keys search hits have.
type Item struct {
	ID      string `json:"id"`
	Wing    string `json:"wing"`
	File    string `json:"file"`
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Heading string `json:"heading"`
	Text    string `json:"text"`
	// Entry is the use: entry that brought the note.
	Entry string `json:"entry"`
	govern.Fields
}

// Rendered is a rendered pack; its JSON is `memminer pack NAME --json`.
type Rendered struct {
	Pack string `json:"pack"`
	File string `json:"file"`
	Body string `json:"body"`
	// Warnings are the stale files, an overdue review and "review needed".
	Warnings     []Warning `json:"warnings"`
	ReviewNeeded bool      `json:"review_needed"`
	Notes        []Item    `json:"notes"`
	// LeftOut counts selected notes the budget had no room for.
	LeftOut int `json:"left_out"`
	// Tokens is the estimate of Text(); never over the budget, unless the
	// body and warnings alone are.
	Tokens int `json:"tokens"`
}

// Render selects the notes of pk from p, governed, and renders them within
// the budget. With block_stale a stale file is a *StaleError.
func Render(ctx context.Context, p *palace.Palace, pk *Pack, opts Options) (Rendered, error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	name := opts.Name
	if name == nil {
		name = func(path string) string { return path }
	}
	staleAfter := pk.StaleAfter
	if staleAfter == 0 {
		staleAfter = opts.StaleAfter
	}
	if staleAfter == 0 {
		staleAfter = govern.DefaultStaleAfter
	}
	sel, err := selectNotes(ctx, p, pk, opts, now, staleAfter)
	if err != nil {
		return Rendered{}, err
	}
	out := Rendered{Pack: pk.Name, File: pk.File, Body: pk.Body, Warnings: []Warning{}, Notes: []Item{}, ReviewNeeded: opts.State.ReviewNeeded}
	stale := staleFiles(p, pk, sel.notes, opts.Hive, now, staleAfter, name)
	if pk.BlockStale && len(stale) > 0 {
		return Rendered{}, &StaleError{Pack: pk.Name, Warnings: stale}
	}
	out.Warnings = append(out.Warnings, stale...)
	out.Warnings = append(out.Warnings, missingFiles(p, pk, opts.Hive)...)
	if !pk.ReviewDate.IsZero() && !now.Before(pk.ReviewDate) {
		out.Warnings = append(out.Warnings, Warning{Kind: WarnPackReview, File: pk.File, Reason: "review due " + pk.ReviewDate.Format(time.DateOnly)})
	}
	if opts.State.ReviewNeeded {
		reason := fmt.Sprintf("%d bad marks in a row", opts.State.BadInARow)
		if opts.State.LastBad != nil && *opts.State.LastBad != "" {
			reason += fmt.Sprintf(" (last: %s)", *opts.State.LastBad)
		}
		out.Warnings = append(out.Warnings, Warning{Kind: WarnReviewNeeded, File: pk.File, Reason: reason})
	}
	budget := opts.Tokens
	if budget <= 0 {
		budget = DefaultTokens
	}
	// The preamble comes with the first note.
	used := wakeup.EstimateTokens(out.Text()) + wakeup.LineTokens(quote.Preamble)
	for i, n := range sel.notes {
		it := item(n, sel.entry[n.ID], sel.mtime[n.Source], now, staleAfter, name)
		cost := wakeup.EstimateTokens(itemText(it) + "\n")
		if used+cost > budget {
			out.LeftOut = len(sel.notes) - i
			break
		}
		used += cost
		out.Notes = append(out.Notes, it)
	}
	// The line counting what did not fit must fit too.
	for len(out.Notes) > 0 && wakeup.EstimateTokens(out.Text()) > budget {
		out.Notes = out.Notes[:len(out.Notes)-1]
		out.LeftOut++
	}
	out.Tokens = wakeup.EstimateTokens(out.Text())
	return out, nil
}

// selection is what a pack selects: notes in order, the entry that
// brought each, and the mtimes of their files.
type selection struct {
	notes []palace.Note
	entry map[string]string
	mtime map[string]time.Time
}

// selectNotes applies use: then avoid: (avoid wins), leaves out what
// governance leaves out of recall, and puts approved notes first, keeping
// the order of use: otherwise.
func selectNotes(ctx context.Context, p *palace.Palace, pk *Pack, opts Options, now time.Time, staleAfter time.Duration) (selection, error) {
	sl := &selector{ctx: ctx, p: p, pk: pk, opts: opts, now: now, staleAfter: staleAfter,
		wings: p.Wings(), held: map[string][]palace.Note{}, queries: map[string]map[string]int{}}
	if opts.Sees != nil {
		sl.wings = slices.DeleteFunc(sl.wings, func(w palace.WingInfo) bool { return !opts.Sees(w.ID) })
	}
	s := selection{entry: map[string]string{}, mtime: map[string]time.Time{}}
	for _, w := range sl.wings {
		for _, src := range p.Sources(w.ID) {
			s.mtime[src.Path] = src.Mtime
		}
	}
	sl.mtime = s.mtime
	// A wing the palace does not have is an error, as for search --wing:
	// a typo would otherwise render "no notes match".
	for _, e := range slices.Concat(pk.Use, pk.Avoid) {
		if e.Kind != Wing {
			continue
		}
		if err := p.CheckWing(e.Value); err != nil {
			return s, fmt.Errorf("pack %s: %s: %w", pk.Name, e, err)
		}
	}
	for _, e := range pk.Use {
		found, err := sl.used(e)
		if err != nil {
			return s, err
		}
		for _, n := range found {
			if _, dup := s.entry[n.ID]; dup {
				continue
			}
			ok, err := sl.admitted(n)
			if err != nil {
				return s, err
			}
			if ok {
				s.entry[n.ID] = e.String()
				s.notes = append(s.notes, n)
			}
		}
	}
	slices.SortStableFunc(s.notes, func(a, b palace.Note) int {
		return boolRank(b.Governance.Status == govern.Approved) - boolRank(a.Governance.Status == govern.Approved)
	})
	return s, nil
}

// selector is selectNotes' work: the palace's notes, each wing's read
// once, and each query searched once.
type selector struct {
	ctx        context.Context
	p          *palace.Palace
	pk         *Pack
	opts       Options
	now        time.Time
	staleAfter time.Duration
	wings      []palace.WingInfo
	mtime      map[string]time.Time
	held       map[string][]palace.Note  // p.Notes copies: each wing once
	queries    map[string]map[string]int // query → id → rank
}

// notesOf are wing's notes.
func (sl *selector) notesOf(wing string) []palace.Note {
	ns, ok := sl.held[wing]
	if !ok {
		if sl.opts.Sees != nil && !sl.opts.Sees(wing) {
			return nil
		}
		ns = sl.p.Notes(wing)
		sl.held[wing] = ns
	}
	return ns
}

// all yields every note of the palace.
func (sl *selector) all(yield func(palace.Note) bool) {
	for _, w := range sl.wings {
		for _, n := range sl.notesOf(w.ID) {
			if !yield(n) {
				return
			}
		}
	}
}

// search is the rank of each note query q finds.
func (sl *selector) search(q string) (map[string]int, error) {
	if r, ok := sl.queries[q]; ok {
		return r, nil
	}
	r := map[string]int{}
	if sl.opts.Search != nil {
		ids, err := sl.opts.Search(sl.ctx, q)
		if err != nil {
			return nil, fmt.Errorf("pack %s: query:%s: %w", sl.pk.Name, q, err)
		}
		for i, id := range ids {
			r[id] = i
		}
	}
	sl.queries[q] = r
	return r, nil
}

// matches reports whether entry e takes note n.
func (sl *selector) matches(e Entry, n palace.Note) (bool, error) {
	switch e.Kind {
	case Wing:
		return n.Wing == e.Value, nil
	case File:
		return sameFile(sl.opts.Hive, e.Value, n.Source), nil
	case Tag:
		return slices.Contains(n.Governance.Tags, e.Value), nil
	case Status:
		if e.Value == string(govern.Stale) {
			// Stale by age or review date too, as search's --fresh.
			stale, _ := n.Governance.Staleness(sl.mtime[n.Source], sl.now, sl.staleAfter)
			return stale, nil
		}
		return string(n.Governance.Status) == e.Value, nil
	case Query:
		r, err := sl.search(e.Value)
		_, ok := r[n.ID]
		return ok, err
	}
	return false, nil
}

// admitted reports whether n may be in the pack: governance leaves it in
// recall and no avoid: entry takes it.
func (sl *selector) admitted(n palace.Note) (bool, error) {
	switch st := n.Governance.Status; {
	case st == govern.Superseded, st == govern.Unapproved && !sl.opts.IncludeInbox:
		return false, nil
	}
	for _, e := range sl.pk.Avoid {
		if ok, err := sl.matches(e, n); ok || err != nil {
			return false, err
		}
	}
	return true, nil
}

// used are the notes use: entry e takes, a query's in its ranking's
// order, the others in the palace's.
func (sl *selector) used(e Entry) ([]palace.Note, error) {
	var found []palace.Note
	if e.Kind == Query {
		r, err := sl.search(e.Value)
		if err != nil {
			return nil, err
		}
		for n := range sl.all {
			if _, ok := r[n.ID]; ok {
				found = append(found, n)
			}
		}
		slices.SortStableFunc(found, func(a, b palace.Note) int { return r[a.ID] - r[b.ID] })
		return found, nil
	}
	candidates := sl.all
	if e.Kind == Wing {
		candidates = slices.Values(sl.notesOf(e.Value))
	}
	for n := range candidates {
		if ok, _ := sl.matches(e, n); ok {
			found = append(found, n)
		}
	}
	return found, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sameFile reports whether path (absolute, as the palace records it) is
// the file rel names in the hive.
func sameFile(hiveDir, rel, path string) bool {
	want := filepath.Join(hiveDir, filepath.FromSlash(rel))
	if want == path {
		return true
	}
	if r, err := filepath.EvalSymlinks(want); err == nil && r == path {
		return true
	}
	return false
}

// staleFiles warns of every file the pack uses (the files of its notes and
// its file: entries) that is stale: its newest note (or its mtime, when
// later) older than staleAfter, or its review date passed.
func staleFiles(p *palace.Palace, pk *Pack, notes []palace.Note, hiveDir string, now time.Time, staleAfter time.Duration, name func(string) string) []Warning {
	used := map[string]bool{}
	wings := map[string]bool{}
	for _, n := range notes {
		used[n.Source] = true
		wings[n.Wing] = true
	}
	var out []Warning
	for _, w := range p.Wings() {
		if !wings[w.ID] && !slices.ContainsFunc(pk.Use, func(e Entry) bool { return e.Kind == File }) {
			continue // none of its files is used
		}
		newest := map[string]time.Time{}
		for _, n := range p.Notes(w.ID) {
			if n.Governance.Date.After(newest[n.Source]) {
				newest[n.Source] = n.Governance.Date
			}
		}
		for _, src := range p.Sources(w.ID) {
			inEntry := slices.ContainsFunc(pk.Use, func(e Entry) bool { return e.Kind == File && sameFile(hiveDir, e.Value, src.Path) })
			if !used[src.Path] && !inEntry {
				continue
			}
			last := newest[src.Path]
			if src.Mtime.After(last) {
				last = src.Mtime
			}
			fm := make(map[string]any, len(src.Frontmatter))
			for k, v := range src.Frontmatter {
				fm[k] = v
			}
			f, _ := govern.ParseFile(fm)
			switch {
			case !f.Review.IsZero() && !now.Before(f.Review):
				out = append(out, Warning{Kind: WarnStale, File: name(src.Path), Reason: "review due " + f.Review.Format(time.DateOnly)})
			case staleAfter != govern.Never && now.Sub(last) > staleAfter:
				out = append(out, Warning{Kind: WarnStale, File: name(src.Path), Reason: fmt.Sprintf("not updated since %s (stale_after %s)", last.UTC().Format(time.DateOnly), age(staleAfter))})
			}
		}
	}
	slices.SortFunc(out, func(a, b Warning) int { return strings.Compare(a.File, b.File) })
	return out
}

// missingFiles warns of each file: entry that names no file of the
// palace: a typo, a file not mined yet, or one that is gone.
func missingFiles(p *palace.Palace, pk *Pack, hiveDir string) []Warning {
	var out []Warning
	for _, e := range pk.Use {
		if e.Kind != File {
			continue
		}
		found := false
		for _, w := range p.Wings() {
			if slices.ContainsFunc(p.Sources(w.ID), func(s palace.Source) bool { return sameFile(hiveDir, e.Value, s.Path) }) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, Warning{Kind: WarnMissing, File: e.Value, Reason: fmt.Sprintf("line %d names no mined file (a typo, or not mined yet)", e.Line)})
		}
	}
	return out
}

// age spells a stale_after as a pack writes it.
func age(d time.Duration) string {
	day := 24 * time.Hour
	if d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	return fmt.Sprintf("%dh", d/time.Hour)
}

func item(n palace.Note, entry string, mtime, now time.Time, staleAfter time.Duration, name func(string) string) Item {
	stale, why := n.Governance.Staleness(mtime, now, staleAfter)
	return Item{ID: n.ID, Wing: n.Wing, File: name(n.Source), Path: n.Source, Line: n.Line, Heading: n.Heading, Text: n.Text, Entry: entry, Fields: n.Governance.Fields(mtime, stale, why)}
}

// Text renders the pack for an agent's context: its name and task, the
// warnings, then the notes, each framed as quoted data (quote.Note) with
// its wing, file, line, date and status, after quote.Preamble. The body
// and every name read from the hive are escaped and neutralised, so
// nothing in them can pose as the client's markup (docs/security.md).
func (r Rendered) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Pack %s (%s)\n", r.Pack, quote.Inline(r.File))
	if r.Body != "" {
		b.WriteString("\n" + quote.Neutralize(quote.Text(r.Body)) + "\n")
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n## Warnings\n")
		for _, w := range r.Warnings {
			b.WriteString(warningLine(w) + "\n")
		}
	}
	b.WriteString("\n## Notes\n")
	if len(r.Notes) == 0 && r.LeftOut == 0 {
		b.WriteString("- no notes match the pack\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString(quote.Preamble + "\n")
	}
	for _, it := range r.Notes {
		b.WriteString(itemText(it) + "\n")
	}
	if r.LeftOut > 0 {
		fmt.Fprintf(&b, "- … %d more %s did not fit the budget (--tokens)\n", r.LeftOut, plural(r.LeftOut))
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return "note"
	}
	return "notes"
}

func warningLine(w Warning) string {
	file, reason := quote.Inline(w.File), quote.Inline(w.Reason)
	switch w.Kind {
	case WarnStale:
		return "- STALE " + file + ": " + reason
	case WarnPackReview:
		return "- this pack is due for review: " + reason
	case WarnReviewNeeded:
		return "- REVIEW NEEDED: " + reason + "; edit the pack or mark it reviewed"
	case WarnMissing:
		return "- MISSING " + file + ": " + reason
	}
	return "- " + reason
}

// itemText is one note of the rendering, framed by quote.Note: a header
// "[wing] file:line, date, status" and the note's lines quoted with "> ".
func itemText(it Item) string {
	var meta []string
	if d := it.DateText(); d != "" {
		meta = append(meta, d)
	}
	if it.Status != nil && *it.Status != string(govern.Stale) {
		meta = append(meta, *it.Status)
	}
	if it.Stale {
		s := "STALE"
		if it.StaleReason != nil {
			s += ": " + *it.StaleReason
		}
		meta = append(meta, s)
	}
	return quote.Note(quote.Source{Wing: it.Wing, File: it.File, Line: it.Line, Date: strings.Join(meta, ", ")}, strings.TrimSpace(it.Text))
}
