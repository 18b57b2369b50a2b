// Package udiff renders the unified diff of two texts, line by line, as
// diff -u prints it (three lines of context). The edit script is
// github.com/aymanbagabas/go-udiff's (Myers' algorithm, linear space), so
// a long memory file diffs in milliseconds.
package udiff

import (
	gudiff "github.com/aymanbagabas/go-udiff"
)

// context is how many unchanged lines surround each change.
const context = 3

// Diff returns the unified diff turning a into b, with fromName and toName
// in its header; "" when they are equal. A last line without a line break
// is marked as diff marks it.
func Diff(fromName, toName string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	out, err := gudiff.ToUnified(fromName, toName, string(a), gudiff.Lines(string(a), string(b)), context)
	if err != nil {
		// The edits are the library's own for a; it cannot fail to apply them.
		return "--- " + fromName + "\n+++ " + toName + "\n" + err.Error() + "\n"
	}
	return out
}
