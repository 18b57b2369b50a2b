package inbox

import (
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace"
)

// PendingIDs returns the ids of the notes that wait in an inbox.
func PendingIDs(notes []palace.Note) []string {
	var ids []string
	for _, n := range notes {
		if n.Governance.Status == govern.Unapproved {
			ids = append(ids, n.ID)
		}
	}
	return ids
}
