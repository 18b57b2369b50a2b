//go:build !linux

package registry

import (
	"net"
	"os"
)

// peerProblem says why the socket at path is not the current user's, or
// "": without SO_PEERCRED the socket file's owner stands for its server.
func peerProblem(_ net.Conn, path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return err.Error()
	}
	return ownerProblem(fi)
}
