package daemonclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/catalog"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
)

// dialTimeout bounds connecting to the socket: a daemon that does not
// accept within it is treated as not running.
const dialTimeout = 2 * time.Second

// DefaultAnswerTimeout bounds how long a read request (status, search,
// wake-up, any Get) waits for the daemon to start answering once the
// socket accepted it. The daemon answers reads from memory in
// milliseconds; a stopped or wedged daemon still has its socket accepted
// by the kernel and never answers, and the caller can read the palace
// itself instead, so a few seconds is long enough to be sure and short
// enough for an agent waiting on recall. Writes are not bounded: see
// docs/daemon.md.
const DefaultAnswerTimeout = 5 * time.Second

// Client talks to the daemon serving a palace, over the palace's control
// socket. Every method returns an error matching api.ErrNotRunning when no
// daemon answers, so a caller can fall back to opening the palace itself;
// a nil *Client is a client that never asks.
type Client struct {
	socket string
	hc     *http.Client
	// answerTimeout bounds reads: see DefaultAnswerTimeout.
	answerTimeout time.Duration
	// noAnswer, when set, hears of each read the daemon did not answer.
	noAnswer func(context.Context, *api.NoAnswerError)
}

// The client is the daemon's transport of api.Service.
var _ api.Service = (*Client)(nil)

// ClientOption changes how a Client asks.
type ClientOption func(*Client)

// WithAnswerTimeout sets how long read requests wait for the daemon to
// start answering (DefaultAnswerTimeout when not given); d <= 0 waits as
// long as the request's context allows.
func WithAnswerTimeout(d time.Duration) ClientOption {
	return func(c *Client) { c.answerTimeout = d }
}

// WithNoAnswer makes the client call f, before returning the error, for
// each read request the daemon did not start answering in time, so a
// caller can say that it falls back to the palace and why.
func WithNoAnswer(f func(context.Context, *api.NoAnswerError)) ClientOption {
	return func(c *Client) { c.noAnswer = f }
}

// NewClient returns a client for the daemon of the palace in palaceDir.
// It does not connect until a method is called.
func NewClient(palaceDir string, opts ...ClientOption) *Client {
	socket := Path(palaceDir)
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			d := net.Dialer{Timeout: dialTimeout}
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConns:    1,
		IdleConnTimeout: 30 * time.Second,
	}
	c := &Client{socket: socket, hc: &http.Client{Transport: tr}, answerTimeout: DefaultAnswerTimeout}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Status asks the daemon for its status.
func (c *Client) Status(ctx context.Context) (api.Status, error) {
	var st api.Status
	err := c.Get(ctx, "/status", nil, &st)
	return st, err
}

// Progress asks the daemon for its work in progress.
func (c *Client) Progress(ctx context.Context) (api.Progress, error) {
	var p api.Progress
	err := c.Get(ctx, "/progress", nil, &p)
	return p, err
}

// Search asks the daemon to search. It fails with api.ErrOtherModel when the
// daemon serves another model than req.Model.
func (c *Client) Search(ctx context.Context, req api.SearchRequest) (api.SearchResult, error) {
	var res api.SearchResult
	err := c.do(ctx, http.MethodPost, "/search", nil, req, &res, read)
	return res, err
}

// Mine hands a mine to the daemon and waits for it. On failure the reply
// still holds what was done before the error.
func (c *Client) Mine(ctx context.Context, req api.MineRequest) (api.MineReply, error) {
	var rep MineErrorReply
	err := c.do(ctx, http.MethodPost, "/mine", nil, req, &rep, repeatable)
	rep.MineReply.Result.Duration = time.Duration(rep.Result.Seconds * float64(time.Second))
	if err == nil && rep.Error != "" {
		err = &RemoteError{Code: rep.Code, Message: rep.Error}
	}
	return rep.MineReply, err
}

// WakeUp asks the daemon for the wake-up digest. Its errors match
// wakeup.ErrEmpty and wakeup.ErrUnknownWing as wakeup.Build's do, with the
// same text.
func (c *Client) WakeUp(ctx context.Context, opts wakeup.Options) (wakeup.Digest, error) {
	q := url.Values{}
	if opts.Tokens != 0 {
		q.Set("tokens", strconv.Itoa(opts.Tokens))
	}
	if opts.Wing != "" {
		q.Set("wing", opts.Wing)
	}
	if opts.StaleAfter != 0 {
		q.Set("stale_after", strconv.FormatInt(int64(opts.StaleAfter), 10))
	}
	if opts.IncludeInbox {
		q.Set("include_inbox", "1")
	}
	for _, n := range opts.Notices {
		q.Add("notice", n)
	}
	if opts.Scope.Caller != "" || opts.Scope.Domain != "" || opts.Scope.AllDomains || len(opts.Scope.Assigned) > 0 {
		scope, err := json.Marshal(opts.Scope)
		if err != nil {
			return wakeup.Digest{}, err
		}
		q.Set("scope", string(scope))
	}
	var dg wakeup.Digest
	err := c.Get(ctx, "/wakeup", q, &dg)
	return dg, err
}

// Get fetches a JSON document from the daemon, such as a component's
// endpoint, decoding it into out.
func (c *Client) Get(ctx context.Context, path string, query url.Values, out any) error {
	return c.do(ctx, http.MethodGet, path, query, nil, out, read)
}

// Post sends in as JSON to a component's endpoint of the daemon, decoding
// the answer into out. A post may change things, so one whose answer is
// cut off is an error, never taken for a daemon gone.
func (c *Client) Post(ctx context.Context, path string, in, out any) error {
	return c.do(ctx, http.MethodPost, path, nil, in, out, write)
}

// requestKind says what a request may do, and so how the client treats a
// daemon that does not answer it.
type requestKind int

const (
	// write may change things: an answer cut off is an error.
	write requestKind = iota
	// repeatable may write, but the caller can do it itself (a mine): a
	// connection that breaks is a daemon gone.
	repeatable
	// read only reads: besides breaking, no start of an answer within
	// the answer timeout is a daemon gone too.
	read
)

// notRunning is the error of a call no daemon took: connecting to socket
// failed with err.
func notRunning(socket string, err error) error {
	return fmt.Errorf("%w (%s: %v)", api.ErrNotRunning, socket, err)
}

// do sends one request. A repeatable or read one whose connection breaks
// before the answer is complete, or a read one the daemon does not start
// answering within c.answerTimeout, fails with an error matching
// api.ErrNotRunning: the daemon died, is stopping or is stopped, and the
// caller falls back to the palace as when none runs.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any, kind requestKind) error {
	if c == nil {
		return fmt.Errorf("%w (not asked)", api.ErrNotRunning)
	}
	// No socket, no daemon: said without the HTTP client's dial (its
	// goroutines and a connection attempt), which most of a command's
	// own work costs when none runs.
	if _, err := os.Lstat(c.socket); errors.Is(err, fs.ErrNotExist) && ctx.Err() == nil {
		return notRunning(c.socket, &os.SyscallError{Syscall: "connect", Err: syscall.ENOENT})
	}
	req, err := newRequest(ctx, method, path, query, in)
	if err != nil {
		return err
	}
	var noAnswer atomic.Bool
	if kind == read && c.answerTimeout > 0 {
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		timer := time.AfterFunc(c.answerTimeout, func() {
			noAnswer.Store(true)
			cancel()
		})
		defer timer.Stop()
		// A daemon at work on a long read says so (Working): each 102
		// Processing is an answer, and the bound starts again.
		rctx = httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
			if code == http.StatusProcessing && !noAnswer.Load() {
				timer.Reset(c.answerTimeout)
			}
			return nil
		}})
		req = req.WithContext(rctx)
	}
	resp, err := c.hc.Do(req)
	if err != nil && noAnswer.Load() && ctx.Err() == nil {
		return c.notAnswered(ctx, path)
	}
	if err != nil {
		return c.sendError(ctx, path, err, kind)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil && noAnswer.Load() && ctx.Err() == nil {
		// The answer began just as the bound passed: not a daemon to wait for.
		return c.notAnswered(ctx, path)
	}
	if err != nil {
		if kind != write && ctx.Err() == nil {
			return c.lost(path, err)
		}
		return fmt.Errorf("daemon %s: read answer: %w", path, err)
	}
	return decodeAnswer(path, resp, data, out)
}

// newRequest is the request of a call: in, when not nil, as its JSON
// body.
func newRequest(ctx context.Context, method, path string, query url.Values, in any) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("daemon %s: %w", path, err)
		}
		body = bytes.NewReader(data)
	}
	// The host is a placeholder: the transport always dials the socket.
	u := url.URL{Scheme: "http", Host: "memminer", Path: path, RawQuery: query.Encode()}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("daemon %s: %w", path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// sendError is the error of a request that got no answer: no daemon
// when the dial failed, a lost connection for a call that may be made
// again (not a write).
func (c *Client) sendError(ctx context.Context, path string, err error, kind requestKind) error {
	// The URL is a placeholder the error would only repeat.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return notRunning(c.socket, op.Err)
	}
	if kind != write && ctx.Err() == nil {
		return c.lost(path, err)
	}
	return fmt.Errorf("daemon %s: %w", path, err)
}

// decodeAnswer decodes the daemon's answer data into out, or its error
// body into a *RemoteError (a failed mine's body carries its summary
// into out too).
func decodeAnswer(path string, resp *http.Response, data []byte, out any) error {
	if resp.StatusCode != http.StatusOK {
		var eb ErrorBody
		if json.Unmarshal(data, &eb) != nil || eb.Error == "" {
			return fmt.Errorf("daemon %s: %s", path, resp.Status)
		}
		if out != nil {
			_ = json.Unmarshal(data, out)
		}
		return &RemoteError{Code: eb.Code, Message: eb.Error, detail: eb.detail()}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("daemon %s: decode answer: %w", path, err)
	}
	return nil
}

// notAnswered is the error of a read request the daemon did not answer.
func (c *Client) notAnswered(ctx context.Context, path string) error {
	e := &api.NoAnswerError{Socket: c.socket, After: c.answerTimeout, Path: path}
	if c.noAnswer != nil {
		c.noAnswer(ctx, e)
	}
	return e
}

// lost is the error of a repeatable request whose connection broke.
func (c *Client) lost(path string, err error) error {
	return &lostError{socket: c.socket, path: path, err: err}
}

// lostError matches api.ErrNotRunning and api.ErrConnectionLost.
type lostError struct {
	socket, path string
	err          error
}

func (e *lostError) Error() string {
	return fmt.Sprintf("%v (the connection to %s broke during %s: %v)", api.ErrNotRunning, e.socket, e.path, e.err)
}

func (e *lostError) Is(target error) bool {
	return target == api.ErrNotRunning || target == api.ErrConnectionLost
}

// Remember asks the daemon to remember a note. Errors match the sentinels
// of package remember (remember.ErrConflict, remember.ErrHashMismatch, …)
// with the same text Remember gives; a connection that broke after the
// request was sent matches api.ErrNotRunning and api.ErrConnectionLost.
func (c *Client) Remember(ctx context.Context, req api.RememberRequest) (remember.Result, error) {
	var rep api.RememberReply
	// Repeatable: a daemon that dies mid-answer may have written the
	// note, so the caller, told api.ErrConnectionLost, sends it again with
	// Retry set, which finds the note written instead of writing it twice.
	err := c.do(ctx, http.MethodPost, "/remember", nil, req, &rep, repeatable)
	return rep.Result, err
}

// Forget asks the daemon to forget a wing. Its errors match
// palace.ErrUnknownWing and mine.ErrAgentExists as mine.Forget's do.
func (c *Client) Forget(ctx context.Context, req api.ForgetRequest) (mine.Forgotten, error) {
	var out mine.Forgotten
	err := c.do(ctx, http.MethodPost, "/forget", nil, req, &out, write)
	return out, err
}

// Index asks the daemon for the hive's catalog.
func (c *Client) Index(ctx context.Context) (catalog.Index, error) {
	var x catalog.Index
	err := c.Get(ctx, "/index", nil, &x)
	return x, err
}

// Conflicts asks the daemon for its registry's open conflicts (of
// req.Wing when set). An unknown wing matches palace.ErrUnknownWing.
func (c *Client) Conflicts(ctx context.Context, req api.ConflictsRequest) (conflicts.List, error) {
	q := url.Values{}
	if req.Wing != "" {
		q.Set("wing", req.Wing)
	}
	var l conflicts.List
	if err := c.Get(ctx, "/conflicts", q, &l); err != nil {
		return conflicts.List{}, err
	}
	if l.Conflicts == nil {
		l.Conflicts = []conflicts.Conflict{}
	}
	return l, nil
}

// MergeConflicts has the daemon merge conflict copies. A path with no
// open copy is an error with the daemon's message, matching
// conflicts.ErrNoCopy.
func (c *Client) MergeConflicts(ctx context.Context, req conflicts.MergeRequest) (conflicts.MergeReport, error) {
	var rep conflicts.MergeReport
	err := c.Post(ctx, "/conflicts/merge", req, &rep)
	return rep, err
}

// Show asks the daemon for the note req.Ref names. A ref that names no
// single note matches api.ErrBadRef, api.ErrAmbiguousRef or
// api.ErrNoNote, with the daemon's text.
func (c *Client) Show(ctx context.Context, req api.ShowRequest) (api.ShownNote, error) {
	var n api.ShownNote
	err := c.do(ctx, http.MethodPost, "/show", nil, req, &n, read)
	return n, err
}

// Inbox asks the daemon for the inbox's items. An unknown wing matches
// palace.ErrUnknownWing.
func (c *Client) Inbox(ctx context.Context, req api.InboxRequest) ([]inbox.Item, error) {
	q := url.Values{}
	if req.Wing != "" {
		q.Set("wing", req.Wing)
	}
	if req.All {
		q.Set("all", "1")
	}
	items := []inbox.Item{}
	err := c.Get(ctx, "/inbox", q, &items)
	return items, err
}

// Decide has the daemon approve or reject an inbox item. Errors match the
// sentinels of packages inbox and remember and api's ref errors; a
// decision written whose mine failed is returned with the error.
func (c *Client) Decide(ctx context.Context, req api.DecideRequest) (api.Decision, error) {
	var rep api.DecideReply
	err := c.do(ctx, http.MethodPost, "/inbox/decide", nil, req, &rep, write)
	return rep.Result, err
}

// Wings are the wings of the daemon's status.
func (c *Client) Wings(ctx context.Context) ([]palace.WingInfo, error) {
	st, err := c.Status(ctx)
	if err != nil {
		return nil, err
	}
	var out []palace.WingInfo
	for _, w := range st.Wings {
		out = append(out, w.WingInfo)
	}
	return out, nil
}
