//go:build amd64 && !linux

package uselite

// requestTiles is false where memminer does not know how to ask the OS for
// the AMX tile state.
func requestTiles() bool { return false }
