package govern

import (
	"testing"
	"time"
)

func TestDateSource(t *testing.T) {
	mtime := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		note      Note
		date, src string
		text      string
	}{
		{"written in the note", Note{Date: time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)}, "2026-11-03", DateFromNote, "2026-11-03"},
		{"from the file's mtime", Note{}, "2026-11-20", DateFromMtime, "modified 2026-11-20"},
	}
	for _, tt := range tests {
		f := tt.note.Fields(mtime, false, "")
		if f.Date == nil || *f.Date != tt.date || f.DateSource == nil || *f.DateSource != tt.src || f.DateText() != tt.text {
			t.Errorf("%s: date %v, source %v, text %q", tt.name, f.Date, f.DateSource, f.DateText())
		}
	}
	if f := (Note{}).Fields(time.Time{}, false, ""); f.Date != nil || f.DateSource != nil || f.DateText() != "" {
		t.Errorf("no date: %+v", f)
	}
}
