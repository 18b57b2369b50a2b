package wakeup

import (
	"strings"

	"github.com/memminer/memminer/internal/quote"
)

// EmptyDigest is a digest with nothing in it, its lists empty rather than
// null, as every digest's are.
func EmptyDigest() Digest {
	return Digest{Handoffs: []Handoff{}, Identity: []IdentityLine{}, Story: []StoryItem{}, Notices: []string{}}
}

// layout fills the budget: identity lines first, within a share of the
// budget when there is a story to tell, then story lines as the ranker
// yields them. hidden identities (other wings', with --wing) are only
// counted, on one "… and N more wings" line. Every line is costed with
// LineTokens, so the sum never exceeds budget, and EstimateTokens of the
// whole is at most that sum.
func layout(budget int, ids []IdentityLine, hidden int, r *ranker) Digest {
	d := EmptyDigest()
	used := 0
	budget -= LineTokens(quote.Preamble) // spent as soon as anything fits

	share := budget
	if len(r.pool) > 0 {
		share = budget / 2
	}
	moreCost := func(n int) int {
		if n == 0 {
			return 0
		}
		return LineTokens(moreWingsLine(n))
	}
	if c := LineTokens(identityHeader); c <= share && len(ids)+hidden > 0 {
		perLine := 0
		if len(ids) > 0 {
			perLine = (share - c - moreCost(hidden)) / len(ids)
		}
		perLine = min(max(perLine, minIdentityTokens), maxIdentityTokens)
		lines := make([]IdentityLine, 0, len(ids))
		costs := make([]int, 0, len(ids))
		sum := c
		for _, l := range ids {
			render := func(t string) string { return identityLine(l.Wing, t) }
			text, ok := truncate(l.Text, perLine, render)
			if !ok {
				text = ellipsis
			}
			l.Text = text
			lines = append(lines, l)
			costs = append(costs, LineTokens(render(text)))
			sum += costs[len(costs)-1]
		}
		if sum+moreCost(hidden) <= share {
			d.Identity = lines
			d.MoreWings = hidden
			used = sum + moreCost(hidden)
		} else {
			// Keep as many lines as fit with a line counting the rest.
			used = c
			for i, l := range lines {
				if used+costs[i]+moreCost(len(lines)-i-1+hidden) > share {
					break
				}
				d.Identity = append(d.Identity, l)
				used += costs[i]
			}
			d.MoreWings = len(lines) - len(d.Identity) + hidden
			if d.MoreWings > 0 {
				if m := moreCost(d.MoreWings); used+m <= share {
					used += m
				} else {
					d.MoreWings = 0
				}
			}
			if len(d.Identity) == 0 && d.MoreWings == 0 {
				used = 0
			}
		}
	}

	// The story: a blank line and its header, then notes while they fit.
	head := LineTokens(storyHeader)
	if used > 0 {
		head += LineTokens("")
	}
	room := budget - used - head
	var picked []StoryItem
	for room > 0 {
		c, score, red := r.next()
		if c == nil {
			break
		}
		it := StoryItem{
			Wing:   c.note.Wing,
			Source: c.note.Source,
			Path:   c.note.Source,
			File:   c.file,
			Line:   c.note.Line,
			Score:  round4(score),
			Also:   append([]string{}, c.also...),
			Pinned: c.pinned,
			Components: map[string]float64{
				"recency":       round4(c.rec),
				"markers":       round4(c.mark),
				"centrality":    round4(c.central),
				"corroboration": round4(c.corr),
				"stale":         boolScore(c.stale),
				"redundancy":    round4(red),
			},
		}
		g := c.note.Governance
		if !g.Date.IsZero() {
			g.Date = c.when // a date after now counts as now
		}
		it.Fields = g.Fields(c.when, c.stale, c.staleReason)
		render := func(t string) string { return storyLine(it, t) }
		// A long note is cut to maxItemTokens; a note that does not fit
		// what is left is cut to fit, if enough is left to say something,
		// and then the budget is spent.
		text, ok := truncate(c.text, maxItemTokens, render)
		cost := LineTokens(render(text))
		last := false
		if !ok || cost > room {
			if room < minCutTokens {
				break
			}
			if text, ok = truncate(c.text, room, render); !ok || len(strings.Fields(text)) < minCutWords {
				break
			}
			cost, last = LineTokens(render(text)), true
		}
		it.Text = text
		picked = append(picked, it)
		room -= cost
		if last {
			break
		}
	}
	d.Story = groupByWing(picked)
	// Say how many did not fit when the line saying so fits what is left.
	if n := r.candidates - r.duplicates - len(picked); len(picked) > 0 && n > 0 && LineTokens(moreNotesLine(n)) <= room {
		d.MoreNotes = n
	}
	return d
}

func boolScore(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// groupByWing orders items by wing, wings in the order of their best item,
// keeping the rank order within a wing.
func groupByWing(items []StoryItem) []StoryItem {
	out := make([]StoryItem, 0, len(items))
	done := map[string]bool{}
	for _, it := range items {
		if done[it.Wing] {
			continue
		}
		done[it.Wing] = true
		for _, o := range items {
			if o.Wing == it.Wing {
				out = append(out, o)
			}
		}
	}
	return out
}
