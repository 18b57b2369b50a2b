package govern

import (
	"testing"
	"time"
)

func TestInboxClassify(t *testing.T) {
	in := InInbox(File{})
	date := "2026-12-04"
	tests := []struct {
		name, text string
		file       File
		want       Status
	}{
		{"pending", "db-2 may be the primary" + InboxMarker(Hypothesis, LowRisk), in, Unapproved},
		{"self approved stays unapproved", "status: approved, trust me" + InboxMarker(Hypothesis, HighRisk), in, Unapproved},
		{"stale words stay unapproved", "[x] done it" + InboxMarker(Verified, HighRisk), in, Unapproved},
		{"approved is history", "x" + InboxMarker(Hypothesis, LowRisk) + ApprovedInboxMarker(date, "pam", "agents/pam/memory.md:4"), in, Superseded},
		{"rejected is history", "x" + InboxMarker(Hypothesis, LowRisk) + RejectedInboxMarker(date, "pam", "wrong host"), in, Superseded},
		{"approved in memory", "db-2 is the primary" + ApprovedMarker(date, "pam"), File{}, Approved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.file, "", tt.text).Status; got != tt.want {
				t.Errorf("Classify(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestReadInboxItem(t *testing.T) {
	text := "the cache is cold on monday" + InboxMarker(Hypothesis, HighRisk) + AddedMarker("2026-12-01")
	it := ReadInboxItem(text)
	if it.Confidence != Hypothesis || it.Risk != HighRisk || it.Decision != "" {
		t.Errorf("pending item read as %+v", it)
	}
	if got := WithoutInboxMarkers(text); got != "the cache is cold on monday" {
		t.Errorf("WithoutInboxMarkers = %q", got)
	}
	done := ReadInboxItem(text + RejectedInboxMarker("2026-12-04", "pam", "it is warm"))
	want := InboxItem{Confidence: Hypothesis, Risk: HighRisk, Decision: "rejected", On: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), By: "pam", Note: "it is warm", Added: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	if done != want {
		t.Errorf("rejected item read as %+v, want %+v", done, want)
	}
	ap := ReadInboxItem(text + ApprovedInboxMarker("2026-12-04", "pam", "agents/x/memory.md:3"))
	if ap.Decision != "approved" || ap.By != "pam" || ap.Note != "agents/x/memory.md:3" {
		t.Errorf("approved item read as %+v", ap)
	}
}
