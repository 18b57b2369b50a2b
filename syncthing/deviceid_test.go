package syncthing

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/syncthing/syncthing/lib/protocol"
)

// TestDeviceIDMatchesSyncthing checks the text form, short form and
// parsing against Syncthing's own lib/protocol.
func TestDeviceIDMatchesSyncthing(t *testing.T) {
	for i := range 200 {
		cert := []byte(fmt.Sprintf("certificate %d", i))
		ours, theirs := NewDeviceID(cert), protocol.NewDeviceID(cert)
		if ours.String() != theirs.String() {
			t.Fatalf("String: %s, Syncthing %s", ours, theirs)
		}
		if ours.Short() != theirs.Short().String() {
			t.Fatalf("Short: %s, Syncthing %s", ours.Short(), theirs.Short())
		}
		for _, form := range []string{theirs.String(), strings.ToLower(theirs.String()), strings.ReplaceAll(theirs.String(), "-", " ")} {
			got, err := ParseDeviceID(form)
			if err != nil || got != ours {
				t.Fatalf("ParseDeviceID(%q) = %s, %v", form, got, err)
			}
		}
	}
}

func TestParseDeviceIDErrors(t *testing.T) {
	good := NewDeviceID([]byte("x")).String()
	// A wrong check character: change the last character of the first group.
	bad := []byte(good)
	if bad[6] == 'A' {
		bad[6] = 'B'
	} else {
		bad[6] = 'A'
	}
	for _, s := range []string{"", "ABC", string(bad), strings.Repeat("!", 56)} {
		if _, err := ParseDeviceID(s); !errors.Is(err, ErrDeviceID) {
			t.Errorf("ParseDeviceID(%q) = %v, want ErrDeviceID", s, err)
		}
	}
	// The old form without check characters is read too.
	id := NewDeviceID([]byte("y"))
	plain := strings.NewReplacer("-", "").Replace(id.String())
	var old strings.Builder
	for i := 0; i < 56; i += 14 {
		old.WriteString(plain[i : i+13])
	}
	if got, err := ParseDeviceID(old.String()); err != nil || got != id {
		t.Fatalf("old form: %s, %v", got, err)
	}
}
