package conflicts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/memminer/memminer/internal/backoff"
)

// Environment variables the --on-conflict command receives.
const (
	EnvPath       = "MEMMINER_CONFLICT_PATH"
	EnvOriginal   = "MEMMINER_CONFLICT_ORIGINAL"
	EnvWing       = "MEMMINER_CONFLICT_WING"
	EnvDevice     = "MEMMINER_CONFLICT_DEVICE"
	EnvDeviceName = "MEMMINER_CONFLICT_DEVICE_NAME"
	EnvDetected   = "MEMMINER_CONFLICT_DETECTED"
	EnvFoundBy    = "MEMMINER_CONFLICT_FOUND_BY"
	// EnvAction is "open", or "merged" when the daemon merged the copy.
	EnvAction = "MEMMINER_CONFLICT_ACTION"
	// EnvJSON holds the conflict's JSON, as the webhook sends it.
	EnvJSON = "MEMMINER_CONFLICT_JSON"
)

// Defaults for Options left zero.
const (
	DefaultCommandTimeout  = time.Minute
	DefaultWebhookAttempts = 5
	DefaultWebhookBackoff  = time.Second
	DefaultWebhookMaxWait  = 30 * time.Second
	DefaultWebhookTimeout  = 10 * time.Second
)

// hiddenEnv are variables of the daemon's environment a command does not
// inherit: secrets, and our own names (so they cannot be preset).
var hiddenEnv = []string{"MEMMINER_SYNCTHING_API_KEY", "STGUIAPIKEY", "MEMMINER_CONFLICT_"}

// maxOutput bounds the command output kept for the log.
const maxOutput = 2 << 10

// alerter delivers alerts for new conflicts, one at a time in the order
// they were found, off the goroutine that found them.
type alerter struct {
	log        *slog.Logger
	argv       []string
	cmdTimeout time.Duration
	webhook    string
	attempts   int
	backoff    time.Duration
	maxWait    time.Duration
	hc         *http.Client
	notify     func(Conflict)

	mu      sync.Mutex
	queue   []Conflict
	wake    chan struct{}
	sent    int
	failed  int
	lastErr string
}

func newAlerter(opts Options) *alerter {
	a := &alerter{
		argv:       opts.Command,
		cmdTimeout: opts.CommandTimeout,
		webhook:    opts.Webhook,
		attempts:   opts.WebhookAttempts,
		backoff:    opts.WebhookBackoff,
		maxWait:    opts.WebhookMaxWait,
		hc:         opts.HTTPClient,
		notify:     opts.Notify,
		wake:       make(chan struct{}, 1),
	}
	if a.cmdTimeout <= 0 {
		a.cmdTimeout = DefaultCommandTimeout
	}
	if a.attempts <= 0 {
		a.attempts = DefaultWebhookAttempts
	}
	if a.backoff <= 0 {
		a.backoff = DefaultWebhookBackoff
	}
	if a.maxWait <= 0 {
		a.maxWait = DefaultWebhookMaxWait
	}
	if a.maxWait < a.backoff {
		a.maxWait = a.backoff
	}
	if a.hc == nil {
		a.hc = &http.Client{Timeout: DefaultWebhookTimeout}
	}
	return a
}

// enabled reports whether anything beyond the log line is configured.
func (a *alerter) enabled() bool {
	return len(a.argv) > 0 || a.webhook != "" || a.notify != nil
}

// enqueue hands c to the delivery goroutine.
func (a *alerter) enqueue(c Conflict) {
	if !a.enabled() {
		return
	}
	a.mu.Lock()
	a.queue = append(a.queue, c)
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// run delivers queued alerts until ctx is done. A command still running
// then is killed; queued alerts are dropped.
func (a *alerter) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		}
		for ctx.Err() == nil {
			a.mu.Lock()
			if len(a.queue) == 0 {
				a.mu.Unlock()
				break
			}
			c := a.queue[0]
			a.queue = a.queue[1:]
			a.mu.Unlock()
			a.deliver(ctx, c)
		}
	}
}

func (a *alerter) deliver(ctx context.Context, c Conflict) {
	if a.notify != nil {
		a.notify(c)
	}
	var errs []error
	if len(a.argv) > 0 {
		if err := a.runCommand(ctx, c); err != nil {
			errs = append(errs, err)
			if ctx.Err() == nil {
				a.log.Warn("on-conflict command failed", "path", c.Path, "err", err)
			}
		}
	}
	if a.webhook != "" {
		if err := a.post(ctx, c); err != nil {
			errs = append(errs, err)
			if ctx.Err() == nil {
				a.log.Warn("conflict webhook failed; giving up on this alert", "path", c.Path, "webhook", redactURL(a.webhook), "attempts", a.attempts, "err", err)
			}
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := errors.Join(errs...); err != nil {
		a.failed++
		a.lastErr = err.Error()
		return
	}
	a.sent++
}

// stats returns delivery counts and the last failure.
func (a *alerter) stats() (sent, failed, pending int, lastErr string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sent, a.failed, len(a.queue), a.lastErr
}

// Env returns the MEMMINER_CONFLICT_* variables describing c, as the
// --on-conflict command receives them.
func Env(c Conflict) []string {
	data, _ := json.Marshal(c)
	return []string{
		EnvPath + "=" + c.Path,
		EnvOriginal + "=" + c.Original,
		EnvWing + "=" + c.Wing,
		EnvDevice + "=" + c.Device,
		EnvDeviceName + "=" + c.DeviceName,
		EnvDetected + "=" + c.Detected.UTC().Format(time.RFC3339),
		EnvFoundBy + "=" + c.FoundBy,
		EnvAction + "=" + c.Action,
		EnvJSON + "=" + string(data),
	}
}

// commandEnv is the daemon's environment without hiddenEnv, plus c's
// variables.
func commandEnv(c Conflict) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		hide := false
		for _, h := range hiddenEnv {
			if name == h || strings.HasSuffix(h, "_") && strings.HasPrefix(name, h) {
				hide = true
				break
			}
		}
		if !hide {
			env = append(env, kv)
		}
	}
	return append(env, Env(c)...)
}

// runCommand runs the --on-conflict command for c: started directly (no
// shell), stdin empty, bounded by cmdTimeout.
func (a *alerter) runCommand(ctx context.Context, c Conflict) error {
	ctx, cancel := context.WithTimeout(ctx, a.cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.argv[0], a.argv[1:]...)
	cmd.Env = commandEnv(c)
	out := &capped{max: maxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("killed after %s: %w", a.cmdTimeout, err)
		}
		if o := strings.TrimSpace(out.String()); o != "" {
			return fmt.Errorf("run %s: %w; output: %s", a.argv[0], err, o)
		}
		return fmt.Errorf("run %s: %w", a.argv[0], err)
	}
	a.log.Debug("on-conflict command done", "path", c.Path, "output", strings.TrimSpace(out.String()))
	return nil
}

// capped keeps the first max bytes written to it.
type capped struct {
	max int
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *capped) String() string { return c.buf.String() }

// post sends c's JSON to the webhook, retrying transport errors, 408, 425,
// 429 and 5xx answers with exponential, jittered backoff (honouring
// Retry-After up to maxWait), at most attempts times.
func (a *alerter) post(ctx context.Context, c Conflict) error {
	body, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode conflict: %w", err)
	}
	wait := backoff.New(a.backoff, a.maxWait)
	var lastErr error
	for attempt := 1; ; attempt++ {
		retryAfter, err := a.postOnce(ctx, body)
		if err == nil {
			a.log.Debug("conflict webhook delivered", "path", c.Path, "attempt", attempt)
			return nil
		}
		lastErr = err
		var perm *permanentError
		if errors.As(err, &perm) || attempt >= a.attempts || ctx.Err() != nil {
			break
		}
		d := wait.Next()
		if retryAfter > 0 {
			d = min(retryAfter, a.maxWait)
		}
		a.log.Debug("conflict webhook failed; retrying", "attempt", attempt, "in", d, "err", err)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return lastErr
}

// permanentError is a webhook answer that retrying will not change.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// postOnce makes one attempt. It returns the server's Retry-After, if any.
func (a *alerter) postOnce(ctx context.Context, body []byte) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.webhook, bytes.NewReader(body))
	if err != nil {
		return 0, &permanentError{fmt.Errorf("webhook %s: %w", redactURL(a.webhook), err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "memminer")
	resp, err := a.hc.Do(req)
	if err != nil {
		// The error text names the URL, which may carry a token.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, fmt.Errorf("webhook %s: %w", redactURL(a.webhook), err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return 0, nil
	}
	err = fmt.Errorf("webhook %s: %s", redactURL(a.webhook), resp.Status)
	if backoff.Retryable(resp.StatusCode) {
		return backoff.RetryAfter(resp.Header, time.Now()), err
	}
	return 0, &permanentError{err}
}

// redactURL shows where a webhook goes without what may authenticate it:
// scheme and host only.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "(webhook)"
	}
	return u.Scheme + "://" + u.Host
}

// CheckWebhook validates a webhook URL: absolute http or https.
func CheckWebhook(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		// url's error quotes the URL, which may carry a token.
		return errors.New("webhook URL does not parse as a URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("webhook URL %s: want an absolute http:// or https:// URL", redactURL(s))
	}
	return nil
}
