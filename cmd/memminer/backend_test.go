package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/catalog"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

// fakeBackend answers every call with err, or first with errs in turn,
// and records the calls.
type fakeBackend struct {
	err   error
	errs  []error
	calls []string
	// retry is the Retry flag of the last remember.
	retry bool
}

func (f *fakeBackend) call(op string) error {
	f.calls = append(f.calls, op)
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return err
	}
	return f.err
}

func (f *fakeBackend) Search(context.Context, api.SearchRequest) (api.SearchResult, error) {
	return api.SearchResult{}, f.call("search")
}
func (f *fakeBackend) WakeUp(context.Context, wakeup.Options) (wakeup.Digest, error) {
	return wakeup.Digest{}, f.call("wake-up")
}
func (f *fakeBackend) Remember(_ context.Context, req api.RememberRequest) (remember.Result, error) {
	f.retry = req.Retry
	return remember.Result{}, f.call("remember")
}
func (f *fakeBackend) Forget(context.Context, api.ForgetRequest) (mine.Forgotten, error) {
	return mine.Forgotten{}, f.call("forget")
}
func (f *fakeBackend) Mine(context.Context, api.MineRequest) (api.MineReply, error) {
	return api.MineReply{}, f.call("mine")
}
func (f *fakeBackend) Index(context.Context) (catalog.Index, error) {
	return catalog.Index{}, f.call("index")
}
func (f *fakeBackend) Status(context.Context) (api.Status, error) {
	return api.Status{}, f.call("status")
}
func (f *fakeBackend) Conflicts(context.Context, api.ConflictsRequest) (conflicts.List, error) {
	return conflicts.List{}, f.call("conflicts")
}
func (f *fakeBackend) MergeConflicts(context.Context, conflicts.MergeRequest) (conflicts.MergeReport, error) {
	return conflicts.MergeReport{}, f.call("merge")
}
func (f *fakeBackend) Show(context.Context, api.ShowRequest) (api.ShownNote, error) {
	return api.ShownNote{}, f.call("show")
}
func (f *fakeBackend) Inbox(context.Context, api.InboxRequest) ([]inbox.Item, error) {
	return nil, f.call("inbox")
}
func (f *fakeBackend) Decide(context.Context, api.DecideRequest) (api.Decision, error) {
	return api.Decision{}, f.call("decide")
}
func (f *fakeBackend) Wings(context.Context) ([]palace.WingInfo, error) { return nil, f.call("wings") }

// callAll calls every operation of b once, returning each one's error.
func callAll(b api.Service) map[string]error {
	ctx := context.Background()
	out := map[string]error{}
	_, out["search"] = b.Search(ctx, api.SearchRequest{Query: "q"})
	_, out["wake-up"] = b.WakeUp(ctx, wakeup.Options{})
	_, out["remember"] = b.Remember(ctx, api.RememberRequest{})
	_, out["forget"] = b.Forget(ctx, api.ForgetRequest{Wing: "w"})
	_, out["mine"] = b.Mine(ctx, api.MineRequest{Path: "/p"})
	_, out["index"] = b.Index(ctx)
	_, out["status"] = b.Status(ctx)
	_, out["conflicts"] = b.Conflicts(ctx, api.ConflictsRequest{})
	_, out["merge"] = b.MergeConflicts(ctx, conflicts.MergeRequest{})
	_, out["show"] = b.Show(ctx, api.ShowRequest{Ref: "r"})
	_, out["inbox"] = b.Inbox(ctx, api.InboxRequest{})
	_, out["decide"] = b.Decide(ctx, api.DecideRequest{Ref: "r"})
	_, out["wings"] = b.Wings(ctx)
	return out
}

var allOps = []string{"search", "wake-up", "remember", "forget", "mine", "index", "status", "conflicts", "merge", "show", "inbox", "decide", "wings"}

// TestFallbackRules pins docs/daemon.md's "Daemon or not": which calls
// go to the palace here for each way the daemon does not serve them.
func TestFallbackRules(t *testing.T) {
	otherModel := &api.OtherModelError{PID: 1, Daemon: "builtin", Caller: "lexical"}
	lost := fmt.Errorf("%w: %w", api.ErrNotRunning, api.ErrConnectionLost)
	tests := []struct {
		name   string
		daemon error
		local  []string // the calls made here
	}{
		{name: "answers", daemon: nil},
		{name: "not running", daemon: api.ErrNotRunning, local: allOps},
		{name: "connection lost", daemon: lost, local: allOps},
		{name: "no answer", daemon: &api.NoAnswerError{Socket: "s", Path: "/search"}, local: allOps},
		// Only a search is answered here for another model: a mine is
		// refused (the daemon holds the writer lock), the rest do not
		// depend on the model.
		{name: "other model", daemon: otherModel, local: []string{"search"}},
		{name: "another hive", daemon: api.ErrOtherHive},
		{name: "refusal", daemon: remember.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, l := &fakeBackend{err: tt.daemon}, &fakeBackend{}
			f := &fallback{daemon: d, local: l, a: &app{}}
			errs := callAll(f)
			if fmt.Sprint(l.calls) != fmt.Sprint(nonNilOps(tt.local)) {
				t.Errorf("called here: %v, want %v", l.calls, tt.local)
			}
			for _, op := range allOps {
				asked := false
				for _, c := range d.calls {
					asked = asked || c == op
				}
				if !asked {
					t.Errorf("%s: the daemon was not asked first", op)
				}
				here := false
				for _, c := range l.calls {
					here = here || c == op
				}
				if !here && !errors.Is(errs[op], tt.daemon) && tt.daemon != nil {
					t.Errorf("%s: error %v, want the daemon's %v", op, errs[op], tt.daemon)
				}
			}
		})
	}
}

func nonNilOps(ops []string) []string {
	if ops == nil {
		return []string{}
	}
	return ops
}

// TestFallbackRememberRetries: a remember whose connection broke is
// written here with Retry, so a note the dying daemon wrote is found, not
// written twice (docs/remember.md).
func TestFallbackRememberRetries(t *testing.T) {
	for _, tt := range []struct {
		err   error
		retry bool
	}{
		{api.ErrNotRunning, false},
		{fmt.Errorf("%w: %w", api.ErrNotRunning, api.ErrConnectionLost), true},
	} {
		l := &fakeBackend{}
		f := &fallback{daemon: &fakeBackend{err: tt.err}, local: l, a: &app{}}
		if _, err := f.Remember(context.Background(), api.RememberRequest{}); err != nil || l.retry != tt.retry {
			t.Errorf("after %v: err %v, retry %v, want %v", tt.err, err, l.retry, tt.retry)
		}
	}
}

// TestFallbackRememberThroughARestartedDaemon: a remember that found no
// daemon and then waited in vain for the palace's lock, which a daemon
// starting took, is sent to that daemon, which serves by then; a daemon
// still not serving leaves the lock's error.
func TestFallbackRememberThroughARestartedDaemon(t *testing.T) {
	locked := fmt.Errorf("%w (held by pid 7): waited 10s; try again when it is done", palace.ErrLocked)
	tests := []struct {
		name   string
		daemon []error // its answers, in turn
		local  error
		want   error
		asked  int // how often the daemon was asked
	}{
		{"the daemon serves after the wait", []error{api.ErrNotRunning, nil}, locked, nil, 2},
		{"the daemon still does not serve", []error{api.ErrNotRunning, api.ErrNotRunning}, locked, palace.ErrLocked, 2},
		{"the daemon refuses", []error{api.ErrNotRunning, remember.ErrConflict}, locked, remember.ErrConflict, 2},
		{"written here", []error{api.ErrNotRunning}, nil, nil, 1},
		{"another error here", []error{api.ErrNotRunning}, remember.ErrBusy, remember.ErrBusy, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, l := &fakeBackend{errs: tt.daemon}, &fakeBackend{err: tt.local}
			f := &fallback{daemon: d, local: l, a: &app{}}
			_, err := f.Remember(context.Background(), api.RememberRequest{})
			if (tt.want == nil) != (err == nil) || !errors.Is(err, tt.want) {
				t.Errorf("err %v, want %v", err, tt.want)
			}
			if len(d.calls) != tt.asked || len(l.calls) != 1 {
				t.Errorf("the daemon asked %d times, here %d; want %d and 1", len(d.calls), len(l.calls), tt.asked)
			}
		})
	}
}

// TestFallbackSearchKeepsRefusal: a search made here after the daemon
// refused another model carries the refusal, for the advice.
func TestFallbackSearchKeepsRefusal(t *testing.T) {
	refusal := &api.OtherModelError{PID: 1, Daemon: "builtin", Caller: "lexical"}
	f := &fallback{daemon: &fakeBackend{err: refusal}, local: &fakeBackend{err: palace.ErrEmpty}, a: &app{}}
	_, err := f.Search(context.Background(), api.SearchRequest{Query: "q"})
	var fb *fellBackError
	if !errors.Is(err, palace.ErrEmpty) || !errors.As(err, &fb) || fb.refusal != refusal {
		t.Fatalf("err %v, want palace.ErrEmpty carrying the refusal", err)
	}
}

// TestFallbackWaitsForADaemonAtWork: an index the daemon works at for
// longer than the answer bound is built once, by the daemon; the command
// does not give up on it and build it again here (issue 47, item 13). The
// daemon's work lasts until a read of a path it never answers has been
// given up on by the same bound, so the bound has passed while it worked,
// whatever the machine's speed.
func TestFallbackWaitsForADaemonAtWork(t *testing.T) {
	dir, err := os.MkdirTemp("", "mm-atwork-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", daemonclient.Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { daemonclient.WorkingEvery = d }(daemonclient.WorkingEvery)
	daemonclient.WorkingEvery = 10 * time.Millisecond
	// Far over any pause between two 102s of a loaded machine.
	const bound = time.Second
	client := daemonclient.NewClient(dir, daemonclient.WithAnswerTimeout(bound))
	stop := make(chan struct{})
	var built atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/silent", func(http.ResponseWriter, *http.Request) { <-stop })
	mux.HandleFunc("/index", func(w http.ResponseWriter, r *http.Request) {
		daemonclient.Working(w, func() {
			built.Add(1)
			if err := client.Get(r.Context(), "/silent", nil, nil); !errors.Is(err, api.ErrNotRunning) {
				t.Errorf("a read never answered: %v, want it given up on", err)
			}
		})
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(catalog.Index{Wings: []catalog.Wing{{Wing: "pam"}}})
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { close(stop); srv.Close() })

	here := &fakeBackend{}
	f := &fallback{daemon: client, local: here, a: &app{}}
	x, err := f.Index(context.Background())
	if err != nil || len(x.Wings) != 1 || x.Wings[0].Wing != "pam" {
		t.Fatalf("index: %+v, %v; want the daemon's", x, err)
	}
	if len(here.calls) != 0 || built.Load() != 1 {
		t.Errorf("built by the daemon %d times, here %v; want once, by the daemon", built.Load(), here.calls)
	}
}
