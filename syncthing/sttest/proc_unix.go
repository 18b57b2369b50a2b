//go:build unix

package sttest

import (
	"os/exec"
	"syscall"
)

// isolate puts the process in its own process group so that kill reaches
// any child it may have forked.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// kill sends SIGKILL to the process group started by cmd.
func kill(cmd *exec.Cmd) {
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		_ = cmd.Process.Kill()
	}
}
