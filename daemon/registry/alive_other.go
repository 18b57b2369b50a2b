//go:build !unix

package registry

// processAlive cannot ask here; whether the socket answers decides.
func processAlive(int) bool { return true }
