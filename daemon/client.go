package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/memminer/memminer/wakeup"
)

// dialTimeout bounds connecting to the socket: a daemon that does not
// accept within it is treated as not running.
const dialTimeout = 2 * time.Second

// Client talks to the daemon serving a palace, over the palace's control
// socket. Every method returns an error matching ErrNotRunning when no
// daemon answers, so a caller can fall back to opening the palace itself;
// a nil *Client is a client that never asks.
type Client struct {
	socket string
	hc     *http.Client
}

// NewClient returns a client for the daemon of the palace in palaceDir.
// It does not connect until a method is called.
func NewClient(palaceDir string) *Client {
	socket := SocketPath(palaceDir)
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			d := net.Dialer{Timeout: dialTimeout}
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConns:    1,
		IdleConnTimeout: 30 * time.Second,
	}
	return &Client{socket: socket, hc: &http.Client{Transport: tr}}
}

// Status asks the daemon for its status.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var st Status
	err := c.Get(ctx, "/status", nil, &st)
	return st, err
}

// Search asks the daemon to search. It fails with ErrOtherModel when the
// daemon serves another model than req.Model.
func (c *Client) Search(ctx context.Context, req SearchRequest) (SearchResult, error) {
	var res SearchResult
	err := c.do(ctx, http.MethodPost, "/search", nil, req, &res, true)
	return res, err
}

// Mine hands a mine to the daemon and waits for it. On failure the reply
// still holds what was done before the error.
func (c *Client) Mine(ctx context.Context, req MineRequest) (MineReply, error) {
	var rep mineErrorReply
	err := c.do(ctx, http.MethodPost, "/mine", nil, req, &rep, true)
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
	var dg wakeup.Digest
	err := c.Get(ctx, "/wakeup", q, &dg)
	return dg, err
}

// Get fetches a JSON document from the daemon, such as a component's
// endpoint, decoding it into out.
func (c *Client) Get(ctx context.Context, path string, query url.Values, out any) error {
	return c.do(ctx, http.MethodGet, path, query, nil, out, true)
}

// Post sends in as JSON to a component's endpoint of the daemon, decoding
// the answer into out. A post may change things, so one whose answer is
// cut off is an error, never taken for a daemon gone.
func (c *Client) Post(ctx context.Context, path string, in, out any) error {
	return c.do(ctx, http.MethodPost, path, nil, in, out, false)
}

// do sends one request. A repeatable one (it only reads, or the caller
// may do it itself, like a mine) whose connection breaks before the answer
// is complete fails with an error matching ErrNotRunning: the daemon died
// or is stopping, and the caller falls back to the palace as when none
// runs.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any, repeatable bool) error {
	if c == nil {
		return fmt.Errorf("%w (not asked)", ErrNotRunning)
	}
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("daemon %s: %w", path, err)
		}
		body = bytes.NewReader(data)
	}
	// The host is a placeholder: the transport always dials the socket.
	u := url.URL{Scheme: "http", Host: "memminer", Path: path, RawQuery: query.Encode()}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return fmt.Errorf("daemon %s: %w", path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return fmt.Errorf("%w (%s: %v)", ErrNotRunning, c.socket, op.Err)
		}
		if repeatable && ctx.Err() == nil {
			return c.lost(path, err)
		}
		return fmt.Errorf("daemon %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		if repeatable && ctx.Err() == nil {
			return c.lost(path, err)
		}
		return fmt.Errorf("daemon %s: read answer: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var eb errorBody
		if json.Unmarshal(data, &eb) != nil || eb.Error == "" {
			return fmt.Errorf("daemon %s: %s", path, resp.Status)
		}
		// A failed mine carries its summary too.
		if out != nil {
			_ = json.Unmarshal(data, out)
		}
		re := &RemoteError{Code: eb.Code, Message: eb.Error}
		switch {
		case eb.ModelMismatch != nil:
			re.detail = eb.ModelMismatch
		case eb.OtherModel != nil:
			re.detail = eb.OtherModel
		}
		return re
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("daemon %s: decode answer: %w", path, err)
	}
	return nil
}

// lost is the error of a repeatable request whose connection broke.
func (c *Client) lost(path string, err error) error {
	return fmt.Errorf("%w (the connection to %s broke during %s: %v)", ErrNotRunning, c.socket, path, err)
}
