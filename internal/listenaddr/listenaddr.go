// Package listenaddr checks the addresses memminer's servers listen on:
// loopback only, unless the user allows other machines.
package listenaddr

import (
	"errors"
	"fmt"
	"net"
)

// ErrRemote means an address other machines can reach, which the user
// did not allow.
var ErrRemote = errors.New("reachable from other machines")

// Check returns an error unless addr is host:port with a valid port and,
// unless allowRemote, a host only this machine reaches (localhost, or a
// loopback IP); that error matches ErrRemote. what names the server in
// messages ("metrics"), example is a good address for it.
func Check(what, addr, example string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s address %q: want host:port, e.g. %s: %w", what, addr, example, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%s address %q: bad port: %w", what, addr, err)
	}
	if allowRemote || IsLoopbackHost(host) {
		return nil
	}
	return fmt.Errorf("%s address %q is %w; use 127.0.0.1:%s or ::1", what, addr, ErrRemote, port)
}

// IsLoopbackHost reports whether host names this machine only.
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
