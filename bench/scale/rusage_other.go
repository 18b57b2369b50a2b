//go:build !unix

package main

import "os"

// maxRSS is not available here: peak memory is reported as 0.
func maxRSS(*os.ProcessState) int64 { return 0 }
