//go:build !unix

package palace

import "time"

// processCPU is not measured here; cpu-ms/op then reads as zero.
func processCPU() time.Duration { return 0 }
