package agentglob

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		pattern string
		want    string // "" when valid
	}{
		{"bots/*", ""},
		{"teams/*/agents/*", ""},
		{"./bots/[a-m]*", ""},
		{"", `pattern "" is empty`},
		{"  ", `pattern "  " is empty`},
		{"/srv/bots/*", `pattern "/srv/bots/*" is absolute`},
		{"../other/*", `pattern "../other/*" has a ".." element`},
		{"bots/../x/*", `pattern "bots/../x/*" has a ".." element`},
		{"bots/[a-", `pattern "bots/[a-" is malformed: syntax error in pattern`},
		{`bots/x\`, `pattern "bots/x\\" is malformed`},
		{".stversions/*", `pattern ".stversions/*" names a hidden directory`},
		{".", `pattern "." matches the hive itself`},
	}
	for _, tt := range tests {
		err := Check(tt.pattern)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Check(%q) = %v, want nil", tt.pattern, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Check(%q) = %v, want %q", tt.pattern, err, tt.want)
		}
	}
	if err := Check("bots/["); !errors.Is(err, filepath.ErrBadPattern) {
		t.Errorf("Check of a malformed pattern = %v, want ErrBadPattern", err)
	}
}
