package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/service/api"
)

// TestRememberLogsRefusal checks that a refused remember is logged as a
// refusal, at WARN with the reason, and a written one at INFO.
func TestRememberLogsRefusal(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	logs := &logBuffer{t: t}
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, Logger: logs.logger()})
	r.idle(t, 1)
	ctx := context.Background()
	_, err := r.c.Remember(ctx, api.RememberRequest{Hive: hive, Request: remember.Request{Wing: "pam", Text: "   "}})
	if !errors.Is(err, remember.ErrBadRequest) {
		t.Fatalf("blank note: %v, want a bad request", err)
	}
	if n := logs.count("level=WARN", "remember request refused", "wing=pam", "reason=", "empty"); n != 1 {
		t.Errorf("%d refusal warnings, want 1", n)
	}
	if n := logs.count("remembered on request"); n != 0 {
		t.Errorf("a refusal was logged as remembered")
	}
	if _, err := r.c.Remember(ctx, api.RememberRequest{Hive: hive, Request: remember.Request{Wing: "pam", Text: "The stapler is in jello"}}); err != nil {
		t.Fatal(err)
	}
	if n := logs.count("level=INFO", "remembered on request", "wing=pam", "added=true"); n != 1 {
		t.Errorf("%d remembered lines, want 1", n)
	}
}
