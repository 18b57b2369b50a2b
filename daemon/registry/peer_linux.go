package registry

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// peerProblem says why the process at the other end of conn is not the
// current user's, or "": on Linux the kernel tells (SO_PEERCRED).
func peerProblem(conn net.Conn, _ string) string {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return "not a unix socket"
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err.Error()
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err.Error()
	}
	if credErr != nil {
		return credErr.Error()
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Sprintf("served by uid %d (pid %d), not %d", cred.Uid, cred.Pid, os.Getuid())
	}
	return ""
}
