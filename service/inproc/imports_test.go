package inproc_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoDaemonOnTheWay: a call without a daemon goes cmd → daemonclient (which
// finds none) → inproc → palace; none of these packages may import the
// daemon (docs/development.md, "Layout").
func TestNoDaemonOnTheWay(t *testing.T) {
	const mod = "github.com/memminer/memminer/"
	out, err := exec.Command("go", "list", "-deps", mod+"service/api", mod+"service/inproc", mod+"service/daemonclient").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == mod+"daemon" || strings.HasPrefix(dep, mod+"daemon/") {
			t.Errorf("api, local or socket imports %s", dep)
		}
	}
}
