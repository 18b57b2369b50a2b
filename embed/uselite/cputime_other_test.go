//go:build !unix

package uselite

import "time"

// cpuTime is not measured here; CPU-time metrics then read as zero.
func cpuTime() time.Duration { return 0 }
