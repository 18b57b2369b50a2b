package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"

	"github.com/memminer/memminer/api"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/mine"
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
