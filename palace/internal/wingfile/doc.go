// Package wingfile is the framing of a palace's wing files: which
// versions there are and how each is recognised, the headers, the
// checksums, the index section's table of contents and arrays, the
// varint head array, and the seal that lets a checked file be opened
// without checking it again.
//
// Versions 1 to 5 are read and 5 is written (see docs/palace.md for the
// support window): 1 and 2 are a header, a gob stream and the vectors
// (StreamHeader); 3 to 5 are a header, the index section search uses in
// place, and the rest of the wing as 2's gob stream less the notes
// (Header). What the palace puts in those parts, its notes, sources and
// BM25 index, is package palace's (wingfile.go, file.go, freeze.go,
// frozen.go, metaenc.go, metadec.go), and so is a wing's lifecycle:
// when a file is read, frozen, thawed, checked or written.
package wingfile
