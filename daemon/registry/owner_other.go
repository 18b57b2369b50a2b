//go:build !unix

package registry

import "io/fs"

// ownerProblem cannot tell owners here: the directory is in the user's
// profile.
func ownerProblem(fs.FileInfo) string { return "" }

// dirProblem cannot tell owners or modes here.
func dirProblem(string) string { return "" }
