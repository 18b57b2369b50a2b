package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memminer/memminer/api"
	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/inbox"
	"github.com/memminer/memminer/index"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/remember"
	"github.com/memminer/memminer/wakeup"
)

// fakeBackend answers every call with err and records the calls.
type fakeBackend struct {
	err   error
	calls []string
	// retry is the Retry flag of the last remember.
	retry bool
}

func (f *fakeBackend) call(op string) error { f.calls = append(f.calls, op); return f.err }

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
func (f *fakeBackend) Index(context.Context) (index.Index, error) {
	return index.Index{}, f.call("index")
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
