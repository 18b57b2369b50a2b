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
				if _, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
					_, _ = io.WriteString(conn, partial)
				}
			}()
		}
	}()
}
