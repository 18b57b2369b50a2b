//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS is a finished process's peak resident set in bytes.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return ru.Maxrss // bytes there
	}
	return ru.Maxrss << 10 // kilobytes on Linux and the BSDs
}
