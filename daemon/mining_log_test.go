package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/service/api"
)

func TestLogMineRequest(t *testing.T) {
	tests := []struct {
		name string
		req  api.MineRequest
		err  error
		want string
	}{
		{"mined", api.MineRequest{Path: "/h"}, nil, `level=INFO msg="mined on request"`},
		{"dry run", api.MineRequest{Path: "/h", DryRun: true}, nil, `level=INFO msg="dry run on request; nothing changed"`},
		{"refused", api.MineRequest{Path: "/h"}, fmt.Errorf("mine /h: %w", mine.ErrNeedsWing), `level=WARN msg="mine request refused"`},
		{"missing path", api.MineRequest{Path: "/nonexistent"}, fmt.Errorf("mine /nonexistent: %w", syscall.ENOENT), `level=WARN msg="mine request refused"`},
		{"agent needs a wing", api.MineRequest{Path: "/h/agents/a"}, fmt.Errorf("mine /h/agents/a: %w", mine.ErrAgentNeedsWing), `level=WARN msg="mine request refused"`},
		{"bad wing id", api.MineRequest{Path: "/h", Wing: "Bad!"}, fmt.Errorf("--wing: %w", hive.ErrBadWingID), `level=WARN msg="mine request refused"`},
		{"failed", api.MineRequest{Path: "/h"}, errors.New("disk full"), `level=ERROR msg="mine request failed"`},
	}
	for _, tt := range tests {
		var b strings.Builder
		logMineRequest(slog.New(slog.NewTextHandler(&b, nil)), tt.req, mine.Summary{Wings: []string{"w"}}, tt.err)
		got := b.String()
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if (tt.err == nil) == strings.Contains(got, "err=") {
			t.Errorf("%s: err attribute in %q", tt.name, got)
		}
	}
}

// TestSecretsLoggedOncePerFile: a mine's warning about a file holding
// secrets is logged once, not on every mine of the file, and again when
// what the file holds changes.
func TestSecretsLoggedOncePerFile(t *testing.T) {
	var b strings.Builder
	log := slog.New(slog.NewTextHandler(&b, nil))
	d := &Daemon{log: log, failures: newBackoff(log, time.Second), lastMine: map[string]api.WingMine{}, secretsLogged: map[string]string{}}
	warn := func(msg string) mine.Summary {
		return mine.Summary{FilesChanged: 1, Warnings: []mine.Problem{{Path: "/h/agents/kim/memory.md", Kind: mine.ProblemSecret, Err: msg}}}
	}
	for _, s := range []mine.Summary{warn("holds 1 secret (github-pat at line 4)"), warn("holds 1 secret (github-pat at line 4)"), warn("holds 2 secrets (github-pat at line 4, npm-access-token at line 9)")} {
		d.record("kim", "/h/agents/kim", "watch", time.Now(), time.Millisecond, s, nil)
	}
	if n := strings.Count(b.String(), `msg="file holds secrets; they are hidden from every output"`); n != 2 {
		t.Errorf("logged %d times, want twice (once, then once more for the change):\n%s", n, b.String())
	}
	if !strings.Contains(b.String(), "npm-access-token at line 9") || !strings.Contains(b.String(), "path=/h/agents/kim/memory.md") {
		t.Errorf("the log does not say where:\n%s", b.String())
	}
}
