package daemon

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/service/api"
)

// TestRefusedMineIsNotCounted: a mine request the daemon refuses (no wing
// follows from its path, a bad wing, a missing path) or in which nothing
// is mined (every file skipped) leaves the mine totals of status and
// metrics as they were; one that mines counts once.
func TestRefusedMineIsNotCounted(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	notes := filepath.Join(tmp, "notes")
	testutil.WriteFile(t, filepath.Join(notes, "a.md"), "- The aardvark audit is due Monday.\n")
	binary := filepath.Join(tmp, "bin", "tool.md")
	testutil.WriteFile(t, binary, "\x7fELF\x00\x00")
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, MetricsAddr: "127.0.0.1:0"})
	before := r.mineTotals(t)

	ctx := context.Background()
	for _, tt := range []struct {
		name string
		req  api.MineRequest
	}{
		{"no wing follows from the path", api.MineRequest{Path: notes}},
		{"bad wing", api.MineRequest{Path: notes, Wing: "Bad Wing!"}},
		{"agent without a wing", api.MineRequest{Path: hive, Agent: "pam"}},
		{"missing path", api.MineRequest{Path: filepath.Join(tmp, "missing")}},
	} {
		if _, err := r.c.Mine(ctx, tt.req); err == nil {
			t.Fatalf("%s: the mine was not refused", tt.name)
		}
	}
	rep, err := r.c.Mine(ctx, api.MineRequest{Path: binary, Wing: "bin"})
	if err != nil || rep.Result.FilesSkipped != 1 {
		t.Fatalf("mine of a binary file: %+v, %v; want it skipped", rep.Result, err)
	}
	if got := r.mineTotals(t); got != before {
		t.Fatalf("mine totals %+v after refused and empty mines, %+v before", got, before)
	}

	if _, err := r.c.Mine(ctx, api.MineRequest{Path: notes, Wing: "research"}); err != nil {
		t.Fatal(err)
	}
	want := before
	want.status++
	want.requests++
	want.durations++
	if got := r.mineTotals(t); got != want {
		t.Fatalf("mine totals %+v after one mine, want %+v", got, want)
	}
}

// mineTotals are a daemon's counts of mines.
type mineTotals struct {
	status    int64 // status's mines
	requests  int64 // memminer_mines_total of trigger request
	durations int64 // memminer_mine_duration_seconds_count
}

// mineTotals waits for the daemon to be idle and reads its mine totals.
func (r *running) mineTotals(t *testing.T) mineTotals {
	t.Helper()
	st := r.idle(t, 1)
	body := r.metrics(t)
	sum := func(re string) int64 {
		var n int64
		for _, m := range regexp.MustCompile(`(?m)^`+re+` (\d+)$`).FindAllStringSubmatch(body, -1) {
			v, _ := strconv.ParseInt(m[1], 10, 64)
			n += v
		}
		return n
	}
	return mineTotals{
		status:    st.Daemon.Mines,
		requests:  sum(`memminer_mines_total\{result="[a-z]+",trigger="request"\}`),
		durations: sum(`memminer_mine_duration_seconds_count`),
	}
}
