// Package palace stores mined notes: one wing per agent, each with a
// chromem-go collection of vectors and a BM25 index, persisted one file per
// wing with atomic replace. It answers hybrid searches over them.
package palace
