package testutil

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
)

// HangUpServer listens on the unix socket at path until the test ends
// and, like a daemon killed while answering, reads each request, writes
// partial (part of an answer, or nothing) and closes the connection.
func HangUpServer(t testing.TB, path, partial string) {
	t.Helper()
	serveUnix(t, path, func(conn net.Conn) {
		if _, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
			_, _ = io.WriteString(conn, partial)
		}
	})
}

// SilentServer listens on the unix socket at path until the test ends
// and, like a daemon stopped with SIGSTOP whose socket the kernel still
// accepts, reads each request and never answers. Connections are closed
// when the test ends.
func SilentServer(t testing.TB, path string) {
	t.Helper()
	done := make(chan struct{})
	serveUnix(t, path, func(conn net.Conn) {
		_, _ = http.ReadRequest(bufio.NewReader(conn))
		<-done
	})
	t.Cleanup(func() { close(done) })
}

// serveUnix listens on the unix socket at path until the test ends,
// handling each connection with handle in a goroutine of its own and
// closing it after.
func serveUnix(t testing.TB, path string, handle func(net.Conn)) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				handle(conn)
			}()
		}
	}()
}
