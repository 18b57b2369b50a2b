//go:build unix

package testutil

import (
	"os/exec"
	"testing"
)

// SleepingProcess starts a process that sleeps until the test ends, when
// it is killed, and returns its pid: a live process to stop, resume or
// name in a record.
func SleepingProcess(t testing.TB) int {
	t.Helper()
	child := exec.Command("sleep", "600")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = child.Process.Kill()
		_ = child.Wait()
	})
	return child.Process.Pid
}
