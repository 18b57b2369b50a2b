// Package wakeup builds the session-start digest of a palace: one identity
// line per wing and the hive's essential story, the notes that matter most
// now, within a token budget.
//
// Build is a pure function of the palace's contents (plus, optionally, an
// identity.md read from disk, see Options.ReadFile): the same palace gives
// the same digest byte for byte. Notes are ranked by recency, explicit
// markers, centrality in their wing and corroboration by other wings, then
// picked greedily with a penalty for redundancy (maximal marginal
// relevance). docs/wake-up.md documents the formula.
package wakeup

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memminer/memminer/clients/preaction"
	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/palace"
)

// DefaultTokens is the budget of a digest when Options.Tokens is zero.
const DefaultTokens = 800

// Weights of the ranking signals; each signal is in [0, 1]. See
// docs/wake-up.md for what each one measures.
const (
	WeightRecency       = 0.25
	WeightMarkers       = 0.35
	WeightCentrality    = 0.20
	WeightCorroboration = 0.20
	// StalePenalty multiplies the score of a clearly stale note.
	StalePenalty = 0.4
	// Redundancy is the weight of a note's similarity to notes already
	// picked (the λ of maximal marginal relevance).
	Redundancy = 0.3
)

// Tuning of the signals and of the work Build does.
const (
	// halfLife is the age at which the recency signal halves.
	halfLife = 30 * 24 * time.Hour
	// poolTotal bounds the candidates compared pairwise, over all wings.
	poolTotal = 320
	// minPool is the least number of candidates kept per wing.
	minPool = 4
	// sampleSize is how many notes of a wing a candidate's centrality is
	// measured against.
	sampleSize = 128
	// maxItemTokens caps one story line; longer notes are cut.
	maxItemTokens = 80
	// minCutTokens is the least room worth filling with a cut note, and
	// minCutWords the least words a note cut to fit must keep.
	minCutTokens, minCutWords = 16, 6
	// minCentralTop is the mean relatedness that makes a note fully central;
	// the most central note of a wing counts as fully central only if it
	// reaches it, so a wing of unrelated notes has no central note.
	minCentralTop = 0.15
	// Identity lines get between these many tokens each.
	minIdentityTokens, maxIdentityTokens = 12, 48
)

// Errors callers tell apart.
var (
	// ErrEmpty means the palace has no notes: nothing has been mined yet.
	ErrEmpty = errors.New("palace has no notes")
	// ErrUnknownWing means Options.Wing names no wing of the palace. It is
	// palace.ErrUnknownWing: an unknown wing is one error, worded one way.
	ErrUnknownWing = palace.ErrUnknownWing
)

// Options configure Build.
type Options struct {
	// Tokens is the hard budget of the Markdown digest, counted with
	// EstimateTokens; zero means DefaultTokens.
	Tokens int
	// Wing, when set, tells the story of this wing only; every wing keeps
	// its identity line. It is a wing id as palace.NormalizeWingID gives it.
	Wing string
	// Now is the time recency is measured from. Zero means the newest
	// source mtime in the palace, so that the same palace always gives the
	// same digest; wall-clock time is never used.
	Now time.Time
	// StaleAfter is how long notes stay fresh when their file does not
	// say (the hive's stale_after); zero means govern.DefaultStaleAfter.
	StaleAfter time.Duration
	// ReadFile, when set, is used to read an identity.md that lies beside a
	// wing's single mined file but was not mined itself (ReadFileLimited
	// suits). Nil keeps Build a function of the palace alone.
	ReadFile func(path string) ([]byte, error)
	// IncludeInbox lets notes waiting in an agent's inbox (unapproved)
	// into the story, marked; by default they are left out and counted.
	IncludeInbox bool
	// Notices are lines the digest's attention section carries before
	// the identities (a pack that needs review, say), as the caller
	// words them.
	Notices []string
	// Isolated, when set, says this machine is cut off from the others
	// sharing the hive: the digest opens with a line saying since when.
	Isolated *Isolation
	// Scope keeps the digest inside the caller's domains
	// (palace.ScopeWings): the wings it does not see are left out whole,
	// identity and story, and Wing must be one it sees. Its Caller, the
	// agent the digest is for, is also whom the open handoffs are to when
	// Wing is not set.
	Scope palace.DomainScope
}

// reader is the wing the digest's open handoffs are addressed to: the
// wing whose story it tells, else the agent it is for; "" for a person's
// digest of every wing.
func (o Options) reader() string {
	if o.Wing != "" {
		return o.Wing
	}
	return o.Scope.Caller
}

// IdentityLine is one wing's identity.
type IdentityLine struct {
	Wing string `json:"wing"`
	Text string `json:"text"`
	// From says where the text came from: FromIdentityFile, FromFrontmatter,
	// FromRole, FromHeading or FromNone.
	From string `json:"from"`
}

// StoryItem is one note of the essential story.
type StoryItem struct {
	Wing string `json:"wing"`
	// Text is the note on one line, cut with an ellipsis if it was long.
	Text string `json:"text"`
	// Source is the note's file as the palace knows it (an absolute path;
	// the CLI prints it relative to the hive).
	Source string `json:"source"`
	// Path is the note's file, absolute.
	Path string `json:"path"`
	// File is Source relative to the wing's root, as the Markdown shows it.
	File string `json:"file"`
	Line int    `json:"line"`
	// Score is what the note was picked with: the weighted signals, times
	// the stale penalty, less the redundancy penalty. Rounded to 4 places.
	Score float64 `json:"score"`
	// Components are the signals behind Score, each in [0, 1]: recency,
	// markers, centrality, corroboration, stale (1 when penalised) and
	// redundancy.
	Components map[string]float64 `json:"components"`
	// Also lists other wings that record the same fact; empty, never
	// nil, when none does, so the JSON key is always there.
	Also []string `json:"also"`
	// Pinned notes are picked before all others.
	Pinned bool `json:"pinned"`
	// Relevance is always null: a digest answers no query. It is there so
	// wake-up and search JSON have the same keys.
	Relevance *float64 `json:"relevance"`
	// Fields are the note's governance (Date is the note's date: the
	// latest date written in it, else its file's mtime). Staleness is
	// taken at the digest's now (Options.Now), so the digest stays
	// deterministic.
	govern.Fields
}

// Digest is a wake-up digest. Its fields are everything Markdown renders.
type Digest struct {
	// Handoffs are the open handoffs addressed to Options.Wing, else to
	// Options.Scope.Caller, shown first; empty without either.
	Handoffs []Handoff      `json:"handoffs"`
	Identity []IdentityLine `json:"identity"`
	// MoreWings counts wings whose identity line did not fit the budget.
	MoreWings int         `json:"more_wings"`
	Story     []StoryItem `json:"story"`
	// MoreNotes counts the notes that could enter the story and did not
	// fit the budget; Markdown says so after the story. It is 0 when the
	// line saying so would not fit either.
	MoreNotes int `json:"more_notes"`
	// Pending counts the notes waiting in the hive's inboxes for a person
	// to approve them; Notices are Options.Notices. Both open the digest,
	// under "## Attention", when there are any.
	Pending int      `json:"inbox_pending"`
	Notices []string `json:"notices"`
	// Tokens is EstimateTokens of Markdown(); it never exceeds the budget.
	Tokens int `json:"tokens"`
	// Isolated is Options.Isolated: absent unless the machine is cut off.
	Isolated *Isolation `json:"isolated,omitempty"`
}

// Markdown renders the digest: quote.Preamble, the open handoffs to the
// wing if any, "## Identity" with one line per wing, then "## Essential
// story" with one line per note, grouped by wing. A section with no lines
// is left out, and so is the preamble of a digest with none. An isolated
// machine's digest opens with a line saying its memory may be behind,
// before the preamble: that line is memminer's, not quoted. Every text
// read from the palace is rendered with quote.Inline: it stays on its line
// and cannot pose as the client's markup (docs/security.md).
func (d Digest) Markdown() string {
	var b strings.Builder
	if d.Isolated != nil {
		b.WriteString(isolationLine(*d.Isolated) + "\n")
	}
	if att := attention(d.Pending, d.Notices); att != "" {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(att)
	}
	if len(d.Handoffs) > 0 || len(d.Identity) > 0 || d.MoreWings > 0 || len(d.Story) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(quote.Preamble + "\n")
	}
	if len(d.Handoffs) > 0 {
		b.WriteString(handoffsHeader + "\n")
		for _, h := range d.Handoffs {
			b.WriteString(handoffLine(h, h.Summary) + "\n")
		}
	}
	if len(d.Identity) > 0 || d.MoreWings > 0 {
		if len(d.Handoffs) > 0 {
			b.WriteString("\n")
		}
		b.WriteString(identityHeader + "\n")
		for _, l := range d.Identity {
			b.WriteString(identityLine(l.Wing, l.Text) + "\n")
		}
		if d.MoreWings > 0 {
			b.WriteString(moreWingsLine(d.MoreWings) + "\n")
		}
	}
	if len(d.Story) > 0 {
		if len(d.Handoffs) > 0 || len(d.Identity) > 0 || d.MoreWings > 0 {
			b.WriteString("\n")
		}
		b.WriteString(storyHeader + "\n")
		for _, it := range d.Story {
			b.WriteString(storyLine(it, it.Text) + "\n")
		}
		if d.MoreNotes > 0 {
			b.WriteString(moreNotesLine(d.MoreNotes) + "\n")
		}
	}
	return b.String()
}

// attention renders the section that opens a digest: what waits for a
// person. Empty when nothing does.
func attention(pending int, notices []string) string {
	if pending == 0 && len(notices) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(attentionHeader + "\n")
	if pending > 0 {
		b.WriteString(pendingLine(pending) + "\n")
	}
	for _, n := range notices {
		b.WriteString("- " + n + "\n")
	}
	return b.String()
}

func pendingLine(n int) string {
	if n == 1 {
		return "- 1 note waits for approval in the inbox (memminer inbox)"
	}
	return fmt.Sprintf("- %d notes wait for approval in the inbox (memminer inbox)", n)
}

const (
	attentionHeader = "## Attention"
	identityHeader  = "## Identity"
	storyHeader     = "## Essential story"
)

func identityLine(wing, text string) string {
	return "- " + quote.Inline(wing) + ": " + quote.Inline(text)
}

// moreNotesLine says how many notes did not fit, as pack does, so that
// an agent knows the digest is a part of memory.
func moreNotesLine(n int) string {
	if n == 1 {
		return "- … 1 more note did not fit the budget (--tokens)"
	}
	return fmt.Sprintf("- … %d more notes did not fit the budget (--tokens)", n)
}

func moreWingsLine(n int) string {
	if n == 1 {
		return "- … and 1 more wing"
	}
	return fmt.Sprintf("- … and %d more wings", n)
}

func storyLine(it StoryItem, text string) string {
	var b strings.Builder
	b.WriteString("- [")
	b.WriteString(quote.Inline(it.Wing))
	b.WriteString("] ")
	b.WriteString(quote.Inline(text))
	b.WriteString(" (")
	b.WriteString(quote.Inline(it.File))
	b.WriteString(":")
	b.WriteString(strconv.Itoa(it.Line))
	if d := it.DateTextFor(text); d != "" {
		b.WriteString(", ")
		b.WriteString(d)
	}
	if it.Status != nil && *it.Status == string(govern.Unapproved) {
		b.WriteString(", unapproved")
	}
	if it.Stale {
		// As search marks them: the digest is what agents paste.
		b.WriteString("; STALE")
		if it.StaleReason != nil && *it.StaleReason != "" {
			b.WriteString(": " + quote.Inline(*it.StaleReason))
		}
	}
	if len(it.Also) > 0 {
		b.WriteString("; also ")
		b.WriteString(quote.Inline(strings.Join(it.Also, ", ")))
	}
	b.WriteString(")")
	return b.String()
}

// cand is a note that may enter the story, with its signals.
type cand struct {
	note  palace.Note
	text  string // flattened
	file  string
	when  time.Time
	stale bool
	// staleReason says why the note is stale (govern.Note.Staleness).
	staleReason string
	pinned      bool
	rec         float64
	mark        float64
	central     float64
	corr        float64
	also        []string
	pre         float64 // score before pairwise signals, for pooling
	base        float64
	// corrDone is set once corroboration is measured (see ranker.next).
	corrDone bool
	wing     *wingData

	// for comparisons
	terms []int32
	vec   []float32
	model string
}

type wingData struct {
	info   palace.WingInfo
	cands  []*cand // in source order
	pool   []*cand
	sample []*cand
}

// Build ranks the palace's notes and renders a digest within the budget.
// It returns ErrEmpty for a palace without notes and an error wrapping
// ErrUnknownWing, naming the known wings, when Options.Wing is not one.
func Build(p *palace.Palace, opts Options) (Digest, error) {
	budget := opts.Tokens
	switch {
	case budget == 0:
		budget = DefaultTokens
	case budget < 0:
		return Digest{}, fmt.Errorf("wake-up: token budget %d is negative", budget)
	}
	infos := p.Wings()
	total := 0
	known := make([]string, len(infos))
	for i, w := range infos {
		total += w.Notes
		known[i] = w.ID
	}
	if total == 0 {
		return Digest{}, ErrEmpty
	}
	if opts.Wing != "" && !slices.Contains(known, opts.Wing) {
		return Digest{}, palace.UnknownWingError(opts.Wing, known)
	}
	sc, err := p.ScopeWings(opts.Scope)
	if err != nil {
		return Digest{}, err
	}
	if opts.Wing != "" && !sc.Sees(opts.Wing) {
		return Digest{}, sc.Outside(opts.Wing)
	}
	infos = slices.DeleteFunc(infos, func(w palace.WingInfo) bool { return !sc.Sees(w.ID) })

	wings := make([]*wingData, len(infos))
	sources := make([]map[string]palace.Source, len(infos))
	srcLists := make([][]palace.Source, len(infos))
	notes := make([][]palace.Note, len(infos))
	now := opts.Now
	for i, info := range infos {
		srcs := p.Sources(info.ID)
		srcLists[i] = srcs
		sources[i] = make(map[string]palace.Source, len(srcs))
		for _, s := range srcs {
			sources[i][s.Path] = s
			if opts.Now.IsZero() && s.Mtime.After(now) {
				now = s.Mtime
			}
		}
		notes[i] = p.Notes(info.ID)
	}

	// With a wing, other wings' identities cost one line in all: the
	// budget goes to the wing's own story.
	var ids []IdentityLine
	hidden := 0
	for i, info := range infos {
		wings[i] = &wingData{info: info, cands: candidates(info, sources[i], notes[i], now, opts.StaleAfter, opts.IncludeInbox)}
		if opts.Wing != "" && info.ID != opts.Wing {
			hidden++
			continue
		}
		text, from := wingIdentity(info, srcLists[i], notes[i], opts.ReadFile)
		ids = append(ids, IdentityLine{Wing: info.ID, Text: text, From: from})
	}

	pending := 0
	for i := range infos {
		pending += len(inbox.PendingIDs(notes[i]))
	}
	notices := slices.Clone(opts.Notices)
	if notices == nil {
		notices = []string{}
	}
	rank := newRanker(p, wings, opts.Wing)
	var head int
	if opts.Isolated != nil {
		// The warning comes first; the rest fits in what is left.
		head = LineTokens(isolationLine(*opts.Isolated)) + LineTokens("")
		if head >= budget {
			head = 0 // too small a budget to warn and say anything
		}
	}
	isolated := head > 0
	// What waits for a person comes next, counted with its blank line.
	if att := attention(pending, notices); att != "" {
		head += EstimateTokens(att + "\n")
	}
	// Then the open handoffs to the reader, within half of what is left.
	// A digest for no one (no wing, no agent) has no handoffs.
	var open []Handoff
	if to := opts.reader(); to != "" {
		open = openHandoffs(infos, notes, sources, to)
	}
	handoffs, used := layoutHandoffs(max(budget-head, 0), open)
	d := layout(max(budget-head-used, 0), ids, hidden, rank)
	d.Handoffs = handoffs
	if isolated {
		d.Isolated = opts.Isolated
	}
	d.Pending, d.Notices = pending, notices
	d.Tokens = EstimateTokens(d.Markdown())
	return d, nil
}

// candidates returns a wing's notes that may enter the story, with their
// per-note signals. Left out: identity.md and the Identity/Role/About
// sections (they are the identity line), superseded notes, and unless
// inbox is set the notes waiting in the inbox.
func candidates(info palace.WingInfo, sources map[string]palace.Source, notes []palace.Note, now time.Time, staleAfter time.Duration, inbox bool) []*cand {
	var out []*cand
	// Notes share headings; what a heading says is worked out once.
	type headingSignals struct {
		identity bool
		mark     float64
		pinned   bool
	}
	headings := map[string]headingSignals{}
	for _, n := range notes {
		src := sources[n.Source]
		h, ok := headings[n.Heading]
		if !ok {
			h.identity = isIdentityHeading(n.Heading)
			h.mark, h.pinned = headingMarker(n.Heading)
			headings[n.Heading] = h
		}
		// A pre-action log is history: searchable, never the story.
		if h.identity || isIdentitySource(n.Source) || preaction.IsLog(filepath.Base(n.Source)) || n.Governance.Status == govern.Superseded || n.Governance.Status == govern.Unapproved && !inbox {
			continue
		}
		text := flatten(n.Text)
		if text == "" {
			continue
		}
		c := &cand{note: n, text: text, file: displayFile(info.Roots, n.Source)}
		mtime := src.Mtime
		if mtime.IsZero() {
			mtime = now
		}
		// A date after now (a deadline, a plan) counts as now.
		when := n.Governance.When(mtime)
		if when.After(now) {
			when = now
		}
		c.when = when
		c.rec = 0.5*decay(now.Sub(mtime), halfLife) + 0.5*decay(now.Sub(when), halfLife)
		c.mark, c.pinned = textMarker(strings.TrimSpace(n.Text))
		if bang(n.Text) {
			c.mark = math.Max(c.mark, markImportant)
		}
		c.mark, c.pinned = math.Max(c.mark, h.mark), c.pinned || h.pinned
		c.stale, c.staleReason = n.Governance.Staleness(mtime, now, staleAfter)
		c.pre = (WeightRecency*c.rec + WeightMarkers*c.mark) * staleFactor(c.stale)
		out = append(out, c)
	}
	return out
}

func staleFactor(stale bool) float64 {
	if stale {
		return StalePenalty
	}
	return 1
}

// displayFile is path relative to the wing root it was mined from: the
// file name for a file root, "memory.md" or "notes/x.md" for a directory.
func displayFile(roots []string, path string) string {
	for _, r := range roots {
		if r == path {
			return filepath.Base(path)
		}
		if rel, err := filepath.Rel(r, path); err == nil && !strings.HasPrefix(rel, "..") && rel != "." {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(path)
}

// better orders candidates: pinned first, then by score, then by wing,
// source and line, so that ties never depend on map order.
func better(a, b *cand, sa, sb float64) bool {
	if a.pinned != b.pinned {
		return a.pinned
	}
	if sa != sb {
		return sa > sb
	}
	return sourceOrder(a, b) < 0
}

func sourceOrder(a, b *cand) int {
	if c := strings.Compare(a.note.Wing, b.note.Wing); c != 0 {
		return c
	}
	if c := strings.Compare(a.note.Source, b.note.Source); c != 0 {
		return c
	}
	if a.note.Line != b.note.Line {
		return a.note.Line - b.note.Line
	}
	return strings.Compare(a.note.ID, b.note.ID)
}

func round4(f float64) float64 { return math.Round(f*10000) / 10000 }
