//go:build unix

package daemon

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processGauges are the process's CPU time and resident memory.
func processGauges() []gauge {
	return []gauge{
		{"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "", func() []sample {
			var ru syscall.Rusage
			if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
				return nil
			}
			sec := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
			return []sample{{value: sec}}
		}},
		{"process_resident_memory_bytes", "Resident memory size in bytes.", "", func() []sample {
			// Linux: the second field of /proc/self/statm, in pages.
			data, err := os.ReadFile("/proc/self/statm")
			if err != nil {
				return nil
			}
			fields := strings.Fields(string(data))
			if len(fields) < 2 {
				return nil
			}
			pages, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return nil
			}
			return []sample{{value: float64(pages * int64(os.Getpagesize()))}}
		}},
	}
}
