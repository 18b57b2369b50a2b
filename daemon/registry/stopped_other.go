//go:build !linux

package registry

// processStopped cannot tell here without a cgo or ps call; a stopped
// daemon is listed as running.
func processStopped(int) bool { return false }
