package daemon

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestServeProfile: the profiles come as net/http/pprof serves them, a
// gzipped protocol buffer by default and text with debug=1.
func TestServeProfile(t *testing.T) {
	tests := []struct {
		name, query, wantType, wantText string
	}{
		{"heap", "?gc=1", "application/octet-stream", ""},
		{"heap", "?debug=1", "text/plain; charset=utf-8", "heap profile:"},
		{"goroutine", "", "application/octet-stream", ""},
		{"goroutine", "?debug=1", "text/plain; charset=utf-8", "goroutine profile: total"},
	}
	for _, tt := range tests {
		t.Run(tt.name+tt.query, func(t *testing.T) {
			rec := httptest.NewRecorder()
			serveProfile(tt.name)(rec, httptest.NewRequest("GET", "/debug/pprof/"+tt.name+tt.query, nil))
			body := rec.Body.Bytes()
			if rec.Code != 200 || rec.Header().Get("Content-Type") != tt.wantType {
				t.Fatalf("status %d, Content-Type %q, want 200 and %q", rec.Code, rec.Header().Get("Content-Type"), tt.wantType)
			}
			if tt.wantText != "" {
				if !strings.HasPrefix(string(body), tt.wantText) {
					t.Errorf("body starts %q, want %q", body[:min(len(body), 40)], tt.wantText)
				}
				return
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("not gzipped: %v", err)
			}
			if raw, err := io.ReadAll(zr); err != nil || len(raw) == 0 {
				t.Errorf("gunzip: %d bytes, %v", len(raw), err)
			}
		})
	}
}

// TestServeProfileRefusesDeltas: a delta over seconds, which
// net/http/pprof makes and this handler does not, is a 400, not a
// profile of another kind.
func TestServeProfileRefusesDeltas(t *testing.T) {
	for _, name := range []string{"heap", "goroutine"} {
		rec := httptest.NewRecorder()
		serveProfile(name)(rec, httptest.NewRequest("GET", "/debug/pprof/"+name+"?seconds=1", nil))
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), "seconds") {
			t.Errorf("%s?seconds=1: %d %s, want 400 naming seconds", name, rec.Code, rec.Body)
		}
	}
}
