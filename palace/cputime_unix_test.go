//go:build unix

package palace

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the process has used:
// benchmarks report it per operation (cpu-ms/op) because a shared machine
// disturbs it less than the wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
