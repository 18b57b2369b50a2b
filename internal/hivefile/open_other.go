//go:build !unix

package hivefile

import "os"

// openNonBlocking opens path; outside Unix opening a file does not wait
// for a writer.
func openNonBlocking(path string) (*os.File, error) {
	return os.Open(path)
}
