package remember

import (
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/handoff"
	"github.com/memminer/memminer/palace"
)

// checkHandoffRef refuses a handoff note (text, the fact as stated) whose
// ref another wing's handoff has already: a ref belongs to the first
// handoff with it (handoff.Owner), and a copy written under another
// wing could only be a forgery or a block. A note in an inbox is no
// handoff and takes no ref.
func checkHandoffRef(p *palace.Palace, wing, text string) error {
	h, ok := handoff.Parse(text)
	if !ok {
		return nil
	}
	for _, w := range p.Wings() {
		if w.ID == wing {
			continue
		}
		for _, n := range p.Notes(w.ID) {
			if n.Governance.Status == govern.Unapproved || hive.IsInboxFile(n.Source) {
				continue
			}
			if o, ok := handoff.Parse(n.Text); ok && o.Ref == h.Ref {
				return badRequest("handoff %s is %s's (a handoff reference belongs to the first handoff with it); hand work over with memminer handoff, which makes a new reference", h.Ref, w.ID)
			}
		}
	}
	return nil
}
