//go:build unix && !linux

package testutil

import "testing"

// runDirSwapper needs renameat2, which only Linux has.
func runDirSwapper(t testing.TB, _, _ string, _ <-chan struct{}) {
	t.Fatal("swapping a directory needs renameat2 (Linux)")
}
