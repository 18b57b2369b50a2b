package wakeup

import (
	"fmt"
	"strings"
	"time"
)

// Isolation says that this machine has been cut off from every other
// machine sharing the hive, so its memory may be behind theirs. The digest
// then opens with a line saying so, within the budget.
type Isolation struct {
	// Since is when another machine was last connected (or when the local
	// Syncthing started, if none was since).
	Since time.Time `json:"since"`
	// Seconds is how long ago that was, when the digest was asked for.
	Seconds int64 `json:"seconds"`
	// Devices counts the other machines sharing the hive.
	Devices int `json:"devices"`
}

// For says how long the machine has been isolated, to the minute once it
// is a minute or more ("42s", "2h5m"), as wake-up and status write it.
func (is Isolation) For() string {
	d := time.Duration(is.Seconds) * time.Second
	if d < time.Minute {
		return d.String()
	}
	return strings.TrimSuffix(d.Truncate(time.Minute).String(), "0s")
}

// isolationLine is the digest's first line for an isolated machine.
func isolationLine(is Isolation) string {
	dur := is.For()
	machines := "the other machine"
	if is.Devices != 1 {
		machines = fmt.Sprintf("the %d other machines", is.Devices)
	}
	return fmt.Sprintf("> Memory may be behind: this machine has not reached %s sharing the hive for %s (since %s); what they wrote since is missing here.",
		machines, dur, is.Since.UTC().Format(time.RFC3339))
}
