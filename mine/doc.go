// Package mine turns markdown memory files into notes: small atomic pieces
// of text a person would recognise (a list item, a paragraph, a short
// section), each with its heading path and starting line.
package mine
