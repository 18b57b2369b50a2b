// Package mine fills the palace from a hive's markdown: it walks a file or
// directory (one wing per agent directory of a hive), cuts each changed
// file into notes with package markdown, classifies them with govern, gives
// each a stable id (NoteID) and writes them to the file's wing, embedding
// what is new; it also removes what left, forgets wings and rebuilds
// damaged ones from the markdown.
package mine
