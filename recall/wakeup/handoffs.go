package wakeup

import (
	"slices"
	"strings"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/handoff"
	"github.com/memminer/memminer/palace"
)

// Handoff is an open handoff addressed to the digest's wing: a note in
// the sender's memory file that no note of the receiver's accepts yet.
type Handoff struct {
	Ref string `json:"ref"`
	// From is the sender's wing, To the receiver's.
	From    string `json:"from"`
	To      string `json:"to"`
	Summary string `json:"summary"`
	// Date is the handoff note's date, YYYY-MM-DD.
	Date string `json:"date"`
	// Source is the note's file as the palace knows it (absolute; the CLI
	// prints it relative to the hive), Path the same, absolute.
	Source string `json:"source"`
	Path   string `json:"path"`
	Line   int    `json:"line"`
}

const handoffsHeader = "## Open handoffs to you (accept one with: memminer handoff --accept REF)"

func handoffLine(h Handoff, summary string) string {
	return "- " + h.Ref + " from " + quote.Inline(h.From) + ", " + h.Date + ": " + quote.Inline(summary)
}

// OpenHandoffs lists the open handoffs to every wing of p, oldest first:
// what each wing's wake-up shows first, read in one pass over the notes.
func OpenHandoffs(p *palace.Palace) []Handoff {
	infos := p.Wings()
	notes := make([][]palace.Note, len(infos))
	sources := make([]map[string]palace.Source, len(infos))
	for i, info := range infos {
		notes[i] = p.Notes(info.ID)
		srcs := p.Sources(info.ID)
		sources[i] = make(map[string]palace.Source, len(srcs))
		for _, s := range srcs {
			sources[i][s.Path] = s
		}
	}
	return openHandoffs(infos, notes, sources, "")
}

// openHandoffs lists the handoffs addressed to wing (to any wing when
// empty) that no note of the receiver's own accepts, oldest first. A ref
// is the handoff handoff.Owner gives it (a copy of the ref in another
// wing is not); a handoff withdrawn (superseded) is not open, and nothing
// from an inbox is a handoff before a person approves it.
func openHandoffs(infos []palace.WingInfo, notes [][]palace.Note, sources []map[string]palace.Source, wing string) []Handoff {
	// accepted are the refs each wing accepted.
	accepted := map[string]map[string]bool{}
	claims := map[string][]handoff.Claim{}
	var refs []string
	for i, info := range infos {
		for _, n := range notes[i] {
			if ref, ok := handoff.ParseAccept(n.Text); ok {
				if accepted[info.ID] == nil {
					accepted[info.ID] = map[string]bool{}
				}
				accepted[info.ID][ref] = true
				continue
			}
			h, ok := handoff.Parse(n.Text)
			if !ok || n.Governance.Status == govern.Unapproved || hive.IsInboxFile(n.Source) {
				continue
			}
			date := ""
			if when := n.Governance.When(sources[i][n.Source].Mtime); !when.IsZero() {
				date = when.UTC().Format("2006-01-02")
			}
			if claims[h.Ref] == nil {
				refs = append(refs, h.Ref)
			}
			claims[h.Ref] = append(claims[h.Ref], handoff.Claim{Note: h, From: info.ID, Date: date,
				Withdrawn: n.Governance.Status == govern.Superseded, Source: n.Source, Line: n.Line})
		}
	}
	var open []Handoff
	for _, ref := range refs {
		c, ok, err := handoff.Owner(claims[ref])
		if err != nil || !ok || c.Withdrawn || (wing != "" && c.To != wing) || accepted[c.To][ref] {
			continue
		}
		open = append(open, Handoff{Ref: c.Ref, From: c.From, To: c.To, Summary: c.Summary, Date: c.Date, Source: c.Source, Path: c.Source, Line: c.Line})
	}
	slices.SortStableFunc(open, func(a, b Handoff) int {
		if c := strings.Compare(a.Date, b.Date); c != 0 {
			return c
		}
		return strings.Compare(a.Ref, b.Ref)
	})
	return open
}

// layoutHandoffs keeps the handoffs that fit within half the budget, each
// cut to a story line's length, and returns them with what they cost
// (the blank line after them included).
func layoutHandoffs(budget int, open []Handoff) ([]Handoff, int) {
	if len(open) == 0 {
		return []Handoff{}, 0
	}
	share := budget / 2
	// The preamble is counted here too: it is printed for handoffs alone.
	used := LineTokens(quote.Preamble) + LineTokens(handoffsHeader) + LineTokens("")
	kept := []Handoff{}
	for _, h := range open {
		render := func(t string) string { return handoffLine(h, t) }
		text, ok := truncate(h.Summary, min(maxItemTokens, share-used), render)
		if !ok {
			break
		}
		h.Summary = text
		kept = append(kept, h)
		used += LineTokens(render(text))
	}
	if len(kept) == 0 {
		return kept, 0
	}
	return kept, used
}
