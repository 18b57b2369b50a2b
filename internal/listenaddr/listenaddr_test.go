package listenaddr

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		err    string // substring; empty: no error
	}{
		{"127.0.0.1:8765", false, ""},
		{"[::1]:8765", false, ""},
		{"localhost:8765", false, ""},
		{"127.1.2.3:0", false, ""},
		{"0.0.0.0:8765", false, `"0.0.0.0:8765" is reachable from other machines; use 127.0.0.1:8765 or ::1`},
		{":8765", false, "reachable from other machines"},
		{"192.0.2.1:8765", false, "reachable from other machines"},
		{"0.0.0.0:8765", true, ""},
		{"8765", false, "want host:port, e.g. 127.0.0.1:8765"},
		{"127.0.0.1:notaport", false, "bad port"},
	}
	for _, tt := range tests {
		err := Check("mcp", tt.addr, "127.0.0.1:8765", tt.remote)
		if remote := strings.Contains(tt.err, "reachable"); errors.Is(err, ErrRemote) != remote {
			t.Errorf("Check(%q, %t) = %v, matching ErrRemote: want %t", tt.addr, tt.remote, err, remote)
		}
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("Check(%q, %t) = %v, want nil", tt.addr, tt.remote, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Check(%q, %t) = %v, want %q", tt.addr, tt.remote, err, tt.err)
		}
	}
}
