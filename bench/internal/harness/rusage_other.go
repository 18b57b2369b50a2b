//go:build !unix

package harness

import "os"

// PeakRSS is not available here: peak memory is reported as 0.
func PeakRSS(*os.ProcessState) int64 { return 0 }
