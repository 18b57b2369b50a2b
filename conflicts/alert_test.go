package conflicts

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// sampleConflict is a conflict as the registry records it.
func sampleConflict(hive string) Conflict {
	return Conflict{
		Path:       filepath.Join(hive, "agents", "dwight", copyName),
		Original:   filepath.Join(hive, "agents", "dwight", "memory.md"),
		Wing:       "dwight",
		Detected:   time.Date(2024, 1, 31, 9, 30, 5, 0, time.UTC),
		Device:     "ABCDEFG",
		DeviceName: "bravo",
		FoundBy:    FoundByEvent,
	}
}

// webhookServer answers the given statuses in turn (the last one
// repeatedly) on 127.0.0.1 and keeps what it received.
type webhookServer struct {
	*httptest.Server
	mu         sync.Mutex
	bodies     [][]byte
	types      []string
	statuses   []int
	retryAfter string
}

func newWebhookServer(t *testing.T, statuses ...int) *webhookServer {
	w := &webhookServer{statuses: statuses}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		n := len(w.bodies)
		w.bodies = append(w.bodies, body)
		w.types = append(w.types, r.Header.Get("Content-Type"))
		status := w.statuses[min(n, len(w.statuses)-1)]
		ra := w.retryAfter
		w.mu.Unlock()
		if r.Method != http.MethodPost {
			status = http.StatusMethodNotAllowed
		}
		if ra != "" {
			rw.Header().Set("Retry-After", ra)
		}
		rw.WriteHeader(status)
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *webhookServer) requests() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.bodies)
}

func TestWebhookRetry(t *testing.T) {
	tests := []struct {
		name       string
		statuses   []int
		retryAfter string
		attempts   int
		wantReqs   int
		wantErr    bool
	}{
		{name: "first try", statuses: []int{204}, attempts: 5, wantReqs: 1},
		{name: "retried until it works", statuses: []int{503, 502, 200}, attempts: 5, wantReqs: 3},
		{name: "429 with Retry-After", statuses: []int{429, 200}, retryAfter: "0", attempts: 5, wantReqs: 2},
		{name: "gives up after the bound", statuses: []int{500}, attempts: 3, wantReqs: 3, wantErr: true},
		{name: "client error is not retried", statuses: []int{400, 200}, attempts: 5, wantReqs: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newWebhookServer(t, tt.statuses...)
			srv.retryAfter = tt.retryAfter
			a := newAlerter(Options{Webhook: srv.URL + "/hook?token=secret", WebhookAttempts: tt.attempts,
				WebhookBackoff: time.Millisecond, WebhookMaxWait: 5 * time.Millisecond})
			a.log = newLogRecorder(t).logger()
			c := sampleConflict(t.TempDir())
			err := a.post(context.Background(), c)
			if (err != nil) != tt.wantErr {
				t.Fatalf("post: %v, want error %v", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("error reveals the webhook's query: %v", err)
			}
			if got := srv.requests(); got != tt.wantReqs {
				t.Fatalf("%d requests, want %d", got, tt.wantReqs)
			}
			for i, body := range srv.bodies {
				var got Conflict
				if err := json.Unmarshal(body, &got); err != nil || got != c {
					t.Errorf("request %d body %s: %v", i, body, err)
				}
				if srv.types[i] != "application/json" {
					t.Errorf("request %d Content-Type %q", i, srv.types[i])
				}
			}
		})
	}
}

func TestWebhookUnreachable(t *testing.T) {
	// A port that was free a moment ago: connections are refused.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/hook"
	srv.Close()
	a := newAlerter(Options{Webhook: url, WebhookAttempts: 3, WebhookBackoff: time.Millisecond, WebhookMaxWait: time.Millisecond})
	a.log = newLogRecorder(t).logger()
	err := a.post(context.Background(), sampleConflict(t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("post to a closed port: %v", err)
	}
}

func TestWebhookStopsWithContext(t *testing.T) {
	srv := newWebhookServer(t, 503)
	a := newAlerter(Options{Webhook: srv.URL, WebhookAttempts: 100, WebhookBackoff: time.Hour, WebhookMaxWait: time.Hour})
	a.log = newLogRecorder(t).logger()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.post(ctx, sampleConflict(t.TempDir())) }()
	testutil.WaitFor(t, "the first attempt", func() bool { return srv.requests() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("post after cancel: %v", err)
	}
}

func TestCheckWebhook(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:9/hook", true},
		{"https://hooks.example/x?token=1", true},
		{"ftp://host/x", false},
		{"/relative", false},
		{"http://", false},
		{"http://[::1", false},
	}
	for _, tt := range tests {
		err := CheckWebhook(tt.url)
		if (err == nil) != tt.ok {
			t.Errorf("CheckWebhook(%q) = %v, want ok %v", tt.url, err, tt.ok)
		}
		if err != nil && strings.Contains(err.Error(), "token") {
			t.Errorf("CheckWebhook error reveals the URL: %v", err)
		}
	}
}

// TestCommandEnvNoShell runs --on-conflict commands for a copy whose name
// holds shell syntax: the command gets the name verbatim in its
// environment, and nothing in the name is ever executed.
func TestCommandEnvNoShell(t *testing.T) {
	t.Setenv("MEMMINER_SYNCTHING_API_KEY", "do-not-leak")
	t.Setenv("STGUIAPIKEY", "do-not-leak-either")
	t.Setenv("MEMMINER_CONFLICT_WING", "preset")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	hv := t.TempDir()
	c := sampleConflict(hv)
	c.Path = filepath.Join(hv, "agents", "dwight", "memory$(touch pwned)`touch pwned2`;touch pwned3.sync-conflict-20240131-093000-ABCDEFG.md")
	c.Original = filepath.Join(hv, "agents", "dwight", "memory$(touch pwned)`touch pwned2`;touch pwned3.md")
	c.DeviceName = "bravo's laptop"
	pwned := func() []string {
		var found []string
		for _, dir := range []string{wd, hv, filepath.Join(hv, "agents", "dwight")} {
			for _, n := range []string{"pwned", "pwned2", "pwned3"} {
				if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
					found = append(found, filepath.Join(dir, n))
					os.Remove(filepath.Join(dir, n))
				}
			}
		}
		return found
	}

	t.Run("program", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "runs")
		a := newAlerter(Options{Command: hookCommand(t, out)})
		a.log = newLogRecorder(t).logger()
		if err := a.runCommand(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		runs := hookRuns(t, out)
		if len(runs) != 1 {
			t.Fatalf("%d runs, want 1", len(runs))
		}
		env := runs[0]
		want := map[string]string{
			EnvPath: c.Path, EnvOriginal: c.Original, EnvWing: "dwight", EnvDevice: "ABCDEFG",
			EnvDeviceName: "bravo's laptop", EnvDetected: "2024-01-31T09:30:05Z", EnvFoundBy: "event",
		}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("%s = %q, want %q", k, env[k], v)
			}
		}
		var fromJSON Conflict
		if err := json.Unmarshal([]byte(env[EnvJSON]), &fromJSON); err != nil || fromJSON != c {
			t.Errorf("%s = %s (%v), want the conflict", EnvJSON, env[EnvJSON], err)
		}
		for _, k := range []string{"MEMMINER_SYNCTHING_API_KEY", "STGUIAPIKEY"} {
			if _, ok := env[k]; ok {
				t.Errorf("the command inherited %s", k)
			}
		}
	})

	t.Run("shell script quoting the variable", func(t *testing.T) {
		if _, err := exec.LookPath("sh"); err != nil {
			t.Skip("no sh")
		}
		out := filepath.Join(t.TempDir(), "path")
		argv, err := SplitCommand(`sh -c 'printf %s "$MEMMINER_CONFLICT_PATH" > "$0"' ` + out)
		if err != nil {
			t.Fatal(err)
		}
		a := newAlerter(Options{Command: argv})
		a.log = newLogRecorder(t).logger()
		if err := a.runCommand(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(out)
		if err != nil || string(got) != c.Path {
			t.Fatalf("script saw %q (%v), want %q", got, err, c.Path)
		}
	})

	t.Run("failure is reported with output", func(t *testing.T) {
		if _, err := exec.LookPath("sh"); err != nil {
			t.Skip("no sh")
		}
		a := newAlerter(Options{Command: []string{"sh", "-c", "echo boom >&2; exit 3"}})
		a.log = newLogRecorder(t).logger()
		err := a.runCommand(context.Background(), c)
		if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("runCommand = %v", err)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		if _, err := exec.LookPath("sleep"); err != nil {
			t.Skip("no sleep")
		}
		a := newAlerter(Options{Command: []string{"sleep", "60"}, CommandTimeout: 50 * time.Millisecond})
		a.log = newLogRecorder(t).logger()
		err := a.runCommand(context.Background(), c)
		if err == nil || !strings.Contains(err.Error(), "killed after") {
			t.Fatalf("runCommand = %v", err)
		}
	})

	if p := pwned(); len(p) > 0 {
		t.Fatalf("shell syntax in the file name was executed: %v", p)
	}
}
