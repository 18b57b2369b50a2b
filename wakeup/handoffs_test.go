package wakeup

import (
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/mine"
)

func TestOpenHandoffsLeadTheDigest(t *testing.T) {
	hive := writeHive(t, []hiveFile{
		{path: "agents/dwight/memory.md", content: "# Dwight\n\n- handoff ho-0a1b2c3d to pam: Finish the db-2 failover runbook (added 2026-10-01)\n" +
			"- handoff ho-11111111 to pam: Rotate the staging keys (added 2026-10-20)\n" +
			"- handoff ho-22222222 to jim: Call the paper supplier (added 2026-10-21)\n" +
			"- handoff ho-33333333 to pam: Order the badges (added 2026-10-22) (superseded 2026-10-23)\n" +
			"- Postgres runs on db-2.\n"},
		{path: "agents/pam/memory.md", content: "# Pam\n\n- accepted handoff ho-11111111 from dwight: Rotate the staging keys (added 2026-10-21)\n- The party is on Friday.\n"},
		{path: "agents/jim/memory.md", content: "# Jim\n\n- Pranks are logged in pranks.md.\n"},
	})
	p := minePalace(t, hive, nil, mine.Options{})
	d := build(t, p, Options{Wing: "pam"})
	if len(d.Handoffs) != 1 || d.Handoffs[0].Ref != "ho-0a1b2c3d" || d.Handoffs[0].From != "dwight" || d.Handoffs[0].Date != "2026-10-01" || d.Handoffs[0].Line != 3 {
		t.Fatalf("handoffs to pam: %+v", d.Handoffs)
	}
	if md := d.Markdown(); !strings.HasPrefix(md, quote.Preamble+"\n"+handoffsHeader+"\n- ho-0a1b2c3d from dwight, 2026-10-01: Finish the db-2 failover runbook\n\n## Identity\n") {
		t.Errorf("digest:\n%s", md)
	}
	if d := build(t, p, Options{}); len(d.Handoffs) != 0 {
		t.Errorf("without a wing: %+v", d.Handoffs)
	}
	if d := build(t, p, Options{Wing: "jim"}); len(d.Handoffs) != 1 || d.Handoffs[0].Ref != "ho-22222222" {
		t.Errorf("handoffs to jim: %+v", d.Handoffs)
	}
	// Every budget holds, the isolation warning first when there is one.
	iso := &Isolation{Since: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Seconds: 86400 * 3, Devices: 2}
	for _, tokens := range []int{100, 150, 300, 800} {
		d := build(t, p, Options{Wing: "pam", Tokens: tokens, Isolated: iso})
		md := d.Markdown()
		if d.Isolated != nil && !strings.HasPrefix(md, isolationLine(*iso)+"\n\n"+quote.Preamble+"\n"+handoffsHeader) && len(d.Handoffs) > 0 {
			t.Errorf("budget %d: isolation, then handoffs:\n%s", tokens, md)
		}
	}
}
