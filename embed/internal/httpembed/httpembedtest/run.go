package httpembedtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// retryLog is the message a client logs before each retry.
const retryLog = "embedding request failed, retrying"

// Case is one scripted exchange: the answers the server plays, the texts
// embedded and what must come of it. Opts is the options type of the client
// under test.
type Case[Req, Opts any] struct {
	// Name names the subtest.
	Name string
	// Opts is handed to Harness.Open.
	Opts Opts
	// Key, when set, replaces Harness.Key as the API key.
	Key string
	// NoKey makes the client run without an API key.
	NoKey bool
	// Steps are the server's answers, in order; the last one repeats.
	Steps []Step[Req]
	// In are the texts to embed.
	In []string
	// WantErr are substrings of the expected error; nil means success with
	// the fake model's vectors (VecFor) of In.
	WantErr []string
	// WantErrIs, when set, must match the error with errors.Is.
	WantErrIs error
	// WantInputs are the texts of each request; nil means one request
	// carrying In.
	WantInputs [][]string
	// WantSleeps, when set, are the exact waits before the retries.
	WantSleeps []time.Duration
	// SleepRange, when set, bounds every wait; there must then be one wait
	// per retry.
	SleepRange [2]time.Duration
}

// Env is what Harness.Open must build the client with.
type Env struct {
	// Root is the fake server's root URL.
	Root string
	// Key is the API key, "" for none.
	Key string
	// HTTPClient, Logger and Sleep replace the client's own.
	HTTPClient *http.Client
	Logger     *slog.Logger
	Sleep      func(ctx context.Context, d time.Duration) error
}

// Harness runs Cases against one client type.
type Harness[Req, Opts any] struct {
	// Path is the endpoint's path on the server.
	Path string
	// Key is the API key of every case unless it says otherwise ("" for
	// none). No key may appear in an error or a log line.
	Key string
	// Open returns the client under test for opts and env; it fails t when
	// it cannot.
	Open func(t *testing.T, opts Opts, env Env) Embedder
	// CheckRequest checks the body of request i, which must carry the
	// texts want.
	CheckRequest func(t *testing.T, i int, req Req, want []string)
}

// countingTransport counts the requests a client sends through it.
type countingTransport struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// Run runs each case as a subtest. Besides what a case asks for, it checks
// that the request bodies pass CheckRequest, that each request carries the
// key as a bearer token (and none without a key), that the key never shows
// in the error or the log, that every request went through Env.HTTPClient
// and that each retry was logged.
func (h *Harness[Req, Opts]) Run(t *testing.T, cases []Case[Req, Opts]) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			srv := NewServer(t, h.Path, tc.Steps...)
			key := h.Key
			if tc.Key != "" {
				key = tc.Key
			}
			if tc.NoKey {
				key = ""
			}
			transport := &countingTransport{next: http.DefaultTransport.(*http.Transport).Clone()}
			t.Cleanup(transport.next.(*http.Transport).CloseIdleConnections)
			var logs bytes.Buffer
			var sleeps Sleeps
			e := h.Open(t, tc.Opts, Env{
				Root:       srv.URL,
				Key:        key,
				HTTPClient: &http.Client{Transport: transport},
				Logger:     slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				Sleep:      sleeps.Sleep,
			})

			got, err := e.Embed(context.Background(), tc.In)

			if tc.WantErr == nil {
				if err != nil {
					t.Fatalf("Embed: %v", err)
				}
				if want := VecsFor(tc.In); len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
					t.Errorf("vectors = %v, want %v", got, want)
				}
			} else {
				if err == nil {
					t.Fatalf("Embed = %v, want error containing %q", got, tc.WantErr)
				}
				t.Logf("error: %v", err)
				for _, s := range tc.WantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if tc.WantErrIs != nil && !errors.Is(err, tc.WantErrIs) {
					t.Errorf("error %v is not %v", err, tc.WantErrIs)
				}
			}
			if key != "" && (strings.Contains(fmt.Sprint(err), key) || strings.Contains(logs.String(), key)) {
				t.Errorf("API key leaked: error %q, logs %q", err, logs.String())
			}

			wantInputs := tc.WantInputs
			if wantInputs == nil {
				wantInputs = [][]string{tc.In}
			}
			reqs, auth := srv.Requests()
			if len(reqs) != len(wantInputs) {
				t.Fatalf("%d requests, want %d", len(reqs), len(wantInputs))
			}
			if n := transport.n.Load(); n != int64(len(reqs)) {
				t.Errorf("%d requests went through the given HTTP client, want %d", n, len(reqs))
			}
			wantAuth := ""
			if key != "" {
				wantAuth = "Bearer " + key
			}
			for i, r := range reqs {
				h.CheckRequest(t, i, r, wantInputs[i])
				if auth[i] != wantAuth {
					t.Errorf("request %d Authorization = %q, want %q", i, auth[i], wantAuth)
				}
			}
			slept := sleeps.Got()
			if n := strings.Count(logs.String(), retryLog); n != len(slept) {
				t.Errorf("%d retries logged, %d waits; logs:\n%s", n, len(slept), logs.String())
			}
			if tc.WantSleeps != nil && !reflect.DeepEqual(slept, tc.WantSleeps) {
				t.Errorf("sleeps = %v, want %v", slept, tc.WantSleeps)
			}
			if tc.SleepRange[1] > 0 {
				if len(slept) != len(reqs)-1 {
					t.Errorf("%d sleeps for %d requests", len(slept), len(reqs))
				}
				for _, d := range slept {
					if d < tc.SleepRange[0] || d > tc.SleepRange[1] {
						t.Errorf("sleep %v outside [%v, %v]", d, tc.SleepRange[0], tc.SleepRange[1])
					}
				}
			}
		})
	}
}
