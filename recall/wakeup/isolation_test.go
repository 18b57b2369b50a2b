package wakeup

import (
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/mine"
)

// TestIsolationHeader: a machine cut off from the others sharing the hive
// gets a digest that opens by saying since when, within the budget; a
// connected one does not.
func TestIsolationHeader(t *testing.T) {
	p := minePalace(t, fixtureHive(t), nil, mine.Options{})
	is := &Isolation{Since: time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC), Seconds: 7530, Devices: 2}
	want := "> Memory may be behind: this machine has not reached the 2 other machines sharing the hive for 2h5m (since 2026-12-04T10:00:00Z); what they wrote since is missing here.\n\n" + quote.Preamble + "\n## Identity\n"
	for _, budget := range []int{120, 800} {
		d := build(t, p, Options{Tokens: budget, Isolated: is})
		md := d.Markdown()
		if !strings.HasPrefix(md, want) {
			t.Fatalf("%d tokens: digest opens\n%s", budget, md)
		}
		if d.Tokens > budget || EstimateTokens(md) > budget {
			t.Fatalf("%d tokens: %d used", budget, d.Tokens)
		}
		if d.Isolated == nil || *d.Isolated != *is {
			t.Fatalf("Isolated = %+v", d.Isolated)
		}
	}
	if md := build(t, p, Options{}).Markdown(); strings.Contains(md, "Memory may be behind") {
		t.Fatalf("connected digest warns:\n%s", md)
	}
	if got := isolationLine(Isolation{Since: is.Since, Seconds: 42, Devices: 1}); !strings.Contains(got, "not reached the other machine sharing the hive for 42s") {
		t.Fatalf("one machine, seconds: %s", got)
	}
}
