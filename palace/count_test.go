package palace

import (
	"strings"
	"testing"
)

// TestCountInTextsFrozenAndWhole: a wing counted as it is held frozen
// gives what its notes' texts hold, and stays frozen.
func TestCountInTextsFrozenAndWhole(t *testing.T) {
	dir := frozenPalace(t, nil)
	whole := openT(t, dir, nil, false)
	frozen := openT(t, dir, nil, true)
	for _, wing := range []string{"alpha", "beta"} {
		for _, s := range []string{"pgbouncer", "vault cluster", "db-3 ", "absent"} {
			want := 0
			for _, n := range whole.Notes(wing) {
				want += strings.Count(n.Text, s)
			}
			if s == "pgbouncer" && want == 0 {
				t.Fatalf("wing %s holds no %q", wing, s)
			}
			if got := whole.CountInTexts(wing, s); got != want {
				t.Errorf("whole %s %q: %d, want %d", wing, s, got, want)
			}
			if got := frozen.CountInTexts(wing, s); got != want {
				t.Errorf("frozen %s %q: %d, want %d", wing, s, got, want)
			}
		}
		if frozen.wings[wing].fz == nil {
			t.Errorf("counting thawed wing %s", wing)
		}
	}
	if n := frozen.CountInTexts("nobody", "pgbouncer"); n != 0 {
		t.Errorf("an unknown wing counts %d", n)
	}
}
