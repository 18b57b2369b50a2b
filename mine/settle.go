package mine

import "time"

// Settled reports whether a file last written (or changed) at mtime had
// been still long enough when it was looked at, at checked, for an
// unchanged stat to prove it unchanged since: mine's racy-clean rule
// (see settled), for callers that keep stats of their own.
func Settled(mtime, checked time.Time) bool { return settledAt(mtime, checked) }
