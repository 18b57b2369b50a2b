//go:build unix

package harness

import (
	"os"
	"runtime"
	"syscall"
)

// PeakRSS is a finished process's peak resident set in bytes, from its
// rusage.
func PeakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return ru.Maxrss // bytes there
	}
	return ru.Maxrss << 10 // kilobytes on Linux and the BSDs
}
