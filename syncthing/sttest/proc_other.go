//go:build !unix

package sttest

import "os/exec"

func isolate(*exec.Cmd) {}

func kill(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
