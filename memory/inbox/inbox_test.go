package inbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

func TestParseClass(t *testing.T) {
	tests := []struct {
		conf, risk, ttl string
		pending         bool
		err             bool
	}{
		{"", "", "", false, false},
		{"verified", "low", "30d", false, false},
		{"hypothesis", "", "", true, false},
		{"", "high", "", true, false},
		{"", "high", "30d", true, true},
		{"sure", "", "", false, true},
		{"", "mid", "", false, true},
		{"", "", "never", false, true},
	}
	for _, tt := range tests {
		c, err := inbox.ParseClass(tt.conf, tt.risk, tt.ttl)
		if (err != nil) != tt.err || err == nil && c.Pending() != tt.pending {
			t.Errorf("ParseClass(%q, %q, %q) = %+v, %v", tt.conf, tt.risk, tt.ttl, c, err)
		}
		if err != nil && !errors.Is(err, inbox.ErrBadClass) {
			t.Errorf("error %v does not match ErrBadClass", err)
		}
	}
}

// TestDecide: an item listed as pending, approved into memory (attributed)
// and marked done in place; a rejected one needs a reason. Items are
// never deleted.
func TestDecide(t *testing.T) {
	ctx := context.Background()
	hive := t.TempDir()
	p, err := palace.Open(ctx, t.TempDir(), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	day := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	opts := remember.Options{Hive: hive, Now: func() time.Time { return day }}
	for _, text := range []string{"the backup runs at two", "the backup is encrypted"} {
		if _, err := remember.Remember(ctx, p, remember.Request{Wing: "kim", Text: text, Confidence: govern.Hypothesis}, opts); err != nil {
			t.Fatal(err)
		}
	}
	now := day.AddDate(0, 0, 3)
	items := inbox.List(p, nil, "", false, now)
	if len(items) != 2 || items[0].Text != "the backup runs at two" || items[0].AgeDays != 3 || items[0].State != inbox.Pending || items[0].File != "agents/kim/inbox.md" {
		t.Fatalf("items = %+v", items)
	}
	if inbox.Count(p) != 2 {
		t.Errorf("count = %d", inbox.Count(p))
	}
	it, n, err := inbox.Find(p, nil, items[0].Ref, now)
	if err != nil || it.Line != 3 {
		t.Fatalf("find: %+v %v", it, err)
	}
	d := inbox.Decision{By: "lee (ops)", Note: "checked", Now: now}
	text, heading, err := inbox.Approval(n, d)
	if err != nil || text != "the backup runs at two (status: approved 2026-12-04 by lee [ops]) — checked" || heading != "" {
		t.Errorf("approval = %q %q %v", text, heading, err)
	}
	// Approving is remembering the approval; a second try (after marking
	// the inbox failed, say) finds it in memory and writes nothing.
	first, err := remember.Remember(ctx, p, remember.Request{Wing: "kim", Text: text, Heading: heading}, opts)
	if err != nil || !first.Added || !strings.HasPrefix(first.File, "agents/kim/memory.") {
		t.Fatalf("approve into memory: %+v, %v", first, err)
	}
	if res, err := remember.Remember(ctx, p, remember.Request{Wing: "kim", Text: text, Heading: heading}, opts); err != nil || res.Added || res.DuplicateOf == nil || res.DuplicateOf.ID != first.ID {
		t.Errorf("approve again: %+v, %v; want the first approval", res, err)
	}
	if err := inbox.MarkApproved(ctx, n, d, "agents/kim/memory.md:3", 1<<20); err != nil {
		t.Fatal(err)
	}
	_, n2, _ := inbox.Find(p, nil, items[1].Ref, now)
	if err := inbox.MarkRejected(ctx, n2, inbox.Decision{By: "lee", Now: now}, 1<<20); !errors.Is(err, inbox.ErrBadDecision) {
		t.Errorf("reject without a note: %v", err)
	}
	if err := inbox.MarkRejected(ctx, n2, inbox.Decision{By: "lee", Note: "no:\nit is not", Now: now}, 1<<20); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(hive, "agents", "kim", "inbox.md"))
	want := "# kim's inbox (waiting for approval)\n\n" +
		"- the backup runs at two (inbox: hypothesis, risk low) (added 2026-12-01) (inbox: approved 2026-12-04 by lee [ops] into agents/kim/memory.md:3)\n" +
		"- the backup is encrypted (inbox: hypothesis, risk low) (added 2026-12-01) (inbox: rejected 2026-12-04 by lee: no: it is not)\n"
	if string(data) != want {
		t.Errorf("inbox.md =\n%s\nwant\n%s", data, want)
	}
	if _, err := mine.Mine(ctx, p, filepath.Join(hive, "agents", "kim"), mine.Options{Hive: hive, Wing: "kim"}); err != nil {
		t.Fatal(err)
	}
	if got := inbox.List(p, nil, "", false, now); len(got) != 0 {
		t.Errorf("pending after deciding: %+v", got)
	}
	all := inbox.List(p, nil, "kim", true, now)
	if len(all) != 2 || all[0].State != inbox.Approved || *all[0].By != "lee [ops]" || all[1].State != inbox.Rejected || !strings.Contains(*all[1].Note, "it is not") {
		t.Errorf("history = %+v", all)
	}
	if _, _, err := inbox.Find(p, nil, all[0].Ref, now); !errors.Is(err, inbox.ErrDecided) {
		t.Errorf("find a decided item: %v", err)
	}
}
