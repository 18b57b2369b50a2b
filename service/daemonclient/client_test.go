package daemonclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
)

// brokenDaemon serves a palace's socket in a temp dir of its own (unix
// socket paths are short) with testutil.HangUpServer, and returns the
// palace dir.
func brokenDaemon(t *testing.T, partial string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mm-broken-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	testutil.HangUpServer(t, Path(dir), partial)
	return dir
}

// TestClientConnectionLostMidAnswer: when the daemon dies during an
// answer, the reads (and a mine, which the CLI can do itself) fail with
// api.ErrNotRunning, so the CLI falls back to the palace; a forget, which
// may have happened, does not.
func TestClientConnectionLostMidAnswer(t *testing.T) {
	answers := map[string]string{
		"no answer":      "",
		"headers only":   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n",
		"part of a body": "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"hits\": [{\"wi",
		"chunked, cut":   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"hits\": [{\"win",
	}
	for name, partial := range answers {
		t.Run(name, func(t *testing.T) {
			c := NewClient(brokenDaemon(t, partial))
			ctx := context.Background()
			calls := map[string]func() error{
				"status":    func() error { _, err := c.Status(ctx); return err },
				"search":    func() error { _, err := c.Search(ctx, api.SearchRequest{Query: "x"}); return err },
				"wake-up":   func() error { _, err := c.WakeUp(ctx, wakeup.Options{}); return err },
				"conflicts": func() error { var out map[string]any; return c.Get(ctx, "/conflicts", nil, &out) },
				"mine":      func() error { _, err := c.Mine(ctx, api.MineRequest{Path: "/hive"}); return err },
			}
			for call, fn := range calls {
				if err := fn(); !errors.Is(err, api.ErrNotRunning) {
					t.Errorf("%s: %v, want an error matching api.ErrNotRunning", call, err)
				}
			}
			if _, err := c.Forget(ctx, api.ForgetRequest{Wing: "a"}); err == nil || errors.Is(err, api.ErrNotRunning) || strings.Count(err.Error(), "/forget") != 1 {
				t.Errorf("forget: %v, want an error that is not api.ErrNotRunning, naming /forget once", err)
			}
		})
	}
}

// TestClientReadsDoNotWaitForASilentDaemon: a daemon that accepts and
// never answers (one stopped with SIGSTOP) fails every read with an error
// matching api.ErrNotRunning and api.ErrNoAnswer, so the CLI reads the palace
// itself; writes are not given up on: they wait as long as their context.
func TestClientReadsDoNotWaitForASilentDaemon(t *testing.T) {
	dir, err := os.MkdirTemp("", "mm-silent-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	testutil.SilentServer(t, Path(dir))
	c := NewClient(dir, WithAnswerTimeout(time.Millisecond))
	ctx := context.Background()
	reads := map[string]func() error{
		"status":    func() error { _, err := c.Status(ctx); return err },
		"search":    func() error { _, err := c.Search(ctx, api.SearchRequest{Query: "x"}); return err },
		"wake-up":   func() error { _, err := c.WakeUp(ctx, wakeup.Options{}); return err },
		"conflicts": func() error { var out map[string]any; return c.Get(ctx, "/conflicts", nil, &out) },
		"index":     func() error { _, err := c.Index(ctx); return err },
	}
	for call, fn := range reads {
		err := fn()
		var na *api.NoAnswerError
		if !errors.Is(err, api.ErrNotRunning) || !errors.Is(err, api.ErrNoAnswer) || !errors.As(err, &na) || na.Socket != Path(dir) {
			t.Errorf("%s: %v, want a api.NoAnswerError on the socket matching api.ErrNotRunning", call, err)
		}
	}
	// A context that ends is the only end of a write's wait.
	wctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, cancel)
	writes := map[string]func() error{
		"mine":     func() error { _, err := c.Mine(wctx, api.MineRequest{Path: "/hive"}); return err },
		"forget":   func() error { _, err := c.Forget(wctx, api.ForgetRequest{Wing: "a"}); return err },
		"remember": func() error { _, err := c.Remember(wctx, api.RememberRequest{}); return err },
		"merge":    func() error { var out map[string]any; return c.Post(wctx, "/conflicts/merge", nil, &out) },
	}
	for call, fn := range writes {
		if err := fn(); !errors.Is(err, context.Canceled) || errors.Is(err, api.ErrNotRunning) {
			t.Errorf("%s: %v, want the context's end, not api.ErrNotRunning", call, err)
		}
	}
}

// TestRemoteErrorKeepsTheModelMismatch: a model mismatch crosses the
// socket with its wings, so the CLI advises the same mines with and
// without the daemon; other errors carry no details.
func TestRemoteErrorKeepsTheModelMismatch(t *testing.T) {
	mm := &palace.ModelMismatchError{Model: "use-lite-0.2.0", Wings: []palace.WingModel{
		{ID: "angela", Model: "lexical", Roots: []string{"/hive/agents/angela"}},
		{ID: "pam", Model: "ollama:nomic-embed-text", Roots: []string{"/hive/agents/pam", "/notes/pam.md"}},
	}}
	tests := []struct {
		name string
		err  error
		want *palace.ModelMismatchError // nil: errors.As finds none
	}{
		{"model mismatch", fmt.Errorf("search: %w", mm), mm},
		{"unknown wing", palace.UnknownWingError("kevin", []string{"angela"}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := searchAnswered(t, 409, tt.err)
			var re *RemoteError
			if !errors.As(err, &re) || err.Error() != tt.err.Error() || re.Code != Code(tt.err) {
				t.Fatalf("err = %#v, want a RemoteError %q, code %s", err, tt.err, Code(tt.err))
			}
			var got *palace.ModelMismatchError
			if errors.As(err, &got) != (tt.want != nil) || tt.want != nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors.As: %+v, want %+v", got, tt.want)
			}
			if errors.Is(err, palace.ErrModelMismatch) != (tt.want != nil) {
				t.Errorf("errors.Is(err, ErrModelMismatch) = %t", !(tt.want != nil))
			}
		})
	}
}

// TestClientWithoutSocket: with no socket file every call fails with
// api.ErrNotRunning before any dial, in the words a dial that finds no
// socket gives (a dangling link in the socket's place makes one).
func TestClientWithoutSocket(t *testing.T) {
	missing, dangling := t.TempDir(), t.TempDir()
	if err := os.Symlink(filepath.Join(dangling, "gone"), Path(dangling)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for call, fn := range map[string]func(c *Client) error{
		"status": func(c *Client) error { _, err := c.Status(ctx); return err },
		"search": func(c *Client) error { _, err := c.Search(ctx, api.SearchRequest{Query: "x"}); return err },
		"mine":   func(c *Client) error { _, err := c.Mine(ctx, api.MineRequest{Path: "/hive"}); return err },
		"forget": func(c *Client) error { _, err := c.Forget(ctx, api.ForgetRequest{Wing: "a"}); return err },
	} {
		got, dialed := fn(NewClient(missing)), fn(NewClient(dangling))
		if !errors.Is(got, api.ErrNotRunning) || !errors.Is(dialed, api.ErrNotRunning) {
			t.Fatalf("%s: %v and %v, want errors matching api.ErrNotRunning", call, got, dialed)
		}
		want := strings.ReplaceAll(dialed.Error(), Path(dangling), Path(missing))
		if got.Error() != want {
			t.Errorf("%s without a socket: %q, want %q as a dial gives", call, got, want)
		}
	}
}

// TestClientWithoutSocketCancelled: a call whose context has ended says
// so, as a dial would, rather than that no daemon runs (which would have
// the CLI open the palace after Ctrl-C).
func TestClientWithoutSocketCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewClient(t.TempDir()).Status(ctx)
	if err == nil || errors.Is(err, api.ErrNotRunning) || !errors.Is(err, context.Canceled) {
		t.Errorf("status with an ended context: %v, want context.Canceled, not api.ErrNotRunning", err)
	}
}

// TestErrorCodesOnTheWire: an error the daemon answers with reaches the
// client as a RemoteError of its code, matching the same sentinel.
func TestErrorCodesOnTheWire(t *testing.T) {
	tests := []struct {
		err      error
		code     string
		sentinel error
	}{
		{fmt.Errorf("no open conflict copy at or of /h/a.md: %w", conflicts.ErrNoCopy), CodeNoCopy, conflicts.ErrNoCopy},
		{palace.UnknownWingError("kevin", []string{"angela"}), CodeUnknownWing, palace.ErrUnknownWing},
		{api.ErrOtherHive, CodeOtherHive, api.ErrOtherHive},
		{fmt.Errorf("%w \"sales\" (domains: global)", palace.ErrUnknownDomain), CodeUnknownDomain, palace.ErrUnknownDomain},
		{fmt.Errorf("%w: wing kelly is in domain marketing", palace.ErrOutsideDomain), CodeOutsideDomain, palace.ErrOutsideDomain},
		{&api.RefError{Err: api.ErrNoNote, Msg: "3f2a: no such note with that id"}, CodeNoNote, api.ErrNoNote},
		{&api.RefError{Err: api.ErrAmbiguousRef, Msg: "3f2a11: 2 notes have an id starting so"}, CodeAmbiguousRef, api.ErrAmbiguousRef},
		{&api.RefError{Err: api.ErrBadRef, Msg: `"x": want a note id`}, CodeBadRef, api.ErrBadRef},
		{fmt.Errorf("3f2a: %w: no pending item has this ref", inbox.ErrNoItem), CodeNoInboxItem, inbox.ErrNoItem},
		{fmt.Errorf("3f2a: %w: approved 2026-01-02 by pam", inbox.ErrDecided), CodeInboxDecided, inbox.ErrDecided},
		{fmt.Errorf("%w: reject needs a note", inbox.ErrBadDecision), CodeBadDecision, inbox.ErrBadDecision},
		{fmt.Errorf("%w: an AWS key", inbox.ErrSecret), CodeInboxSecret, inbox.ErrSecret},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			err := searchAnswered(t, 404, tt.err)
			var re *RemoteError
			if !errors.As(err, &re) || re.Code != tt.code || !errors.Is(err, tt.sentinel) || err.Error() != tt.err.Error() {
				t.Errorf("err = %#v, want a RemoteError %q of code %s matching %v", err, tt.err, tt.code, tt.sentinel)
			}
		})
	}
}

// searchAnswered is the error of a search a daemon answers with err, as
// its handlers write it, and HTTP status.
func searchAnswered(t *testing.T, status int, err error) error {
	t.Helper()
	body, jerr := json.Marshal(NewErrorBody(err))
	if jerr != nil {
		t.Fatal(jerr)
	}
	answer := fmt.Sprintf("HTTP/1.1 %d x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", status, len(body), body)
	_, err = NewClient(brokenDaemon(t, answer)).Search(context.Background(), api.SearchRequest{Query: "x"})
	return err
}
