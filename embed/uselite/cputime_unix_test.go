//go:build unix

package uselite

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) this process has used.
// Benchmarks report it because it is steadier than wall time on a shared
// machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
