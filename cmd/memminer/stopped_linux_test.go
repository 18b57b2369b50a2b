package main

import (
	"syscall"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

func init() {
	stoppedProcess = func(t *testing.T) int {
		pid := testutil.SleepingProcess(t)
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		return pid
	}
}
