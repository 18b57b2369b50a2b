package wakeup

import (
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/mine"
)

// TestInboxLeftOutAndCounted: notes waiting in an inbox are not in the
// story unless asked, are counted under ## Attention with the caller's
// notices, and the budget holds with the attention lines.
func TestInboxLeftOutAndCounted(t *testing.T) {
	hive := writeHive(t, []hiveFile{
		{path: "agents/kim/memory.md", content: "# kim\n\n- Decision: releases go out on Tuesdays\n"},
		{path: "agents/kim/inbox.md", content: "# kim's inbox\n\n- releases may slip to Wednesdays (inbox: hypothesis, risk low)\n- drop the old bucket (inbox: verified, risk high)\n"},
	})
	p := minePalace(t, hive, nil, mine.Options{Hive: hive})
	d := build(t, p, Options{Tokens: 200, Notices: []string{"pack deploy needs review"}})
	md := d.Markdown()
	if !strings.HasPrefix(md, "## Attention\n- 2 notes wait for approval in the inbox (memminer inbox)\n- pack deploy needs review\n\n"+quote.Preamble+"\n## Identity\n") {
		t.Errorf("digest:\n%s", md)
	}
	if strings.Contains(md, "Wednesdays") || strings.Contains(md, "bucket") || !strings.Contains(md, "Tuesdays") {
		t.Errorf("story:\n%s", md)
	}
	if d.Pending != 2 || d.Tokens > 200 || d.Tokens != EstimateTokens(md) {
		t.Errorf("pending %d, tokens %d", d.Pending, d.Tokens)
	}
	with := build(t, p, Options{Tokens: 200, IncludeInbox: true}).Markdown()
	if !strings.Contains(with, "releases may slip to Wednesdays (inbox: hypothesis, risk low) (inbox.md:3, modified 2026-11-01, unapproved)") {
		t.Errorf("with the inbox:\n%s", with)
	}
}
