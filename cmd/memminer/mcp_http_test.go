package main

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// bearerClient is an HTTP client that sends token as a bearer token.
func bearerClient(token string) *http.Client {
	return &http.Client{Transport: headerTransport{"Authorization": "Bearer " + token}}
}

// headerTransport adds headers to every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// post sends one JSON-RPC body to url with headers and returns the status
// and body.
func post(t *testing.T, url, body string, headers map[string]string) (int, string) {
	t.Helper()
	all := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	maps.Copy(all, headers)
	return sendHTTP(t, http.MethodPost, url, body, all)
}

// sendHTTP sends body to url with method and headers and returns the
// status and body.
func sendHTTP(t *testing.T, method, url, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMCPHTTPGuards: without the right token, with a browser Origin not
// allowed, or beyond the session cap a request is refused; idle sessions
// expire; a message with an id and nothing else is answered.
func TestMCPHTTPGuards(t *testing.T) {
	c := newMinedCLI(t)
	s := newMCPServerFor(t, c, "jim")
	o := defaultHTTPOptions()
	o.token = "right-token-0123456789"
	o.origins = []string{"http://localhost:6274"}
	o.maxSessions = 2
	o.idle = time.Hour
	hs := httptest.NewServer(s.httpHandler(o))
	defer hs.Close()
	url := hs.URL + "/mcp"
	auth := map[string]string{"Authorization": "Bearer " + o.token}
	tests := []struct {
		name    string
		headers map[string]string
		code    int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer wrong-token-0123456789"}, http.StatusUnauthorized},
		{"token as basic", map[string]string{"Authorization": "Basic " + o.token}, http.StatusUnauthorized},
		{"browser origin", map[string]string{"Authorization": "Bearer " + o.token, "Origin": "http://evil.example"}, http.StatusForbidden},
		{"allowed origin", map[string]string{"Authorization": "Bearer " + o.token, "Origin": "http://localhost:6274"}, http.StatusOK},
		{"token", auth, http.StatusOK},
		{"beyond the cap", auth, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		code, body := post(t, url, initializeBody, tt.headers)
		if code != tt.code {
			t.Errorf("%s: %d %s, want %d", tt.name, code, body, tt.code)
		}
	}
	code, body := post(t, url, `{"jsonrpc":"2.0","id":7}`, auth)
	var answer struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &answer); code != http.StatusBadRequest || err != nil || answer.ID != 7 || answer.Error.Code != -32600 {
		t.Errorf("id without method: %d %q", code, body)
	}
}

// TestMCPHTTPSessionsExpire: sessions nobody uses are closed after
// --session-idle, and the cap then lets new ones in.
func TestMCPHTTPSessionsExpire(t *testing.T) {
	c := newMinedCLI(t)
	s := newMCPServerFor(t, c, "jim")
	o := defaultHTTPOptions()
	o.token = "right-token-0123456789"
	o.maxSessions = 2
	o.idle = 200 * time.Millisecond
	hs := httptest.NewServer(s.httpHandler(o))
	defer hs.Close()
	auth := map[string]string{"Authorization": "Bearer " + o.token}
	// Plain requests, not an SDK client: nothing opens a session again on
	// its own, so the count only falls once the sessions expire, however
	// slowly a loaded machine runs the requests.
	for range 2 {
		if code, body := post(t, hs.URL+"/mcp", initializeBody, auth); code != http.StatusOK {
			t.Fatalf("initialize: %d %s", code, body)
		}
	}
	testutil.WaitFor(t, "idle sessions to expire", func() bool { return s.httpSessions() == 0 })
	for range 2 {
		if code, body := post(t, hs.URL+"/mcp", initializeBody, auth); code != http.StatusOK {
			t.Errorf("a new session after the others expired: %d %s", code, body)
		}
	}
}

// TestMCPHTTPOtherUser: another local user can neither read the token
// nor call the server without it.
func TestMCPHTTPOtherUser(t *testing.T) {
	if os.Getenv("MEMMINER_OTHER_USER_URL") != "" {
		otherUserCalls(t)
		return
	}
	c := newMinedCLI(t)
	tokenFile := strings.TrimSpace(c.ok("mcp", "token", "--path"))
	token := strings.TrimSpace(c.ok("mcp", "token"))
	if again := strings.TrimSpace(c.ok("mcp", "token")); again != token || len(token) < 40 {
		t.Fatalf("token %q, then %q", token, again)
	}
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	// Let the other user reach the file, so only its mode stops it.
	for d := filepath.Dir(tokenFile); d != filepath.Dir(os.TempDir()) && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := newMCPServerFor(t, c, "jim")
	o := defaultHTTPOptions()
	o.token = token
	hs := httptest.NewServer(s.httpHandler(o))
	defer hs.Close()
	cmd := testutil.HelperAsOtherUser(t, "TestMCPHTTPOtherUser", "MEMMINER_OTHER_USER_URL="+hs.URL+"/mcp", "MEMMINER_OTHER_USER_TOKEN_FILE="+tokenFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as another user: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "refused: 401") || !strings.Contains(string(out), "token unreadable") {
		t.Errorf("as another user:\n%s", out)
	}
}

// otherUserCalls runs as the other user: it tries the token file and the
// server, printing what happened.
func otherUserCalls(t *testing.T) {
	if os.Getuid() == 0 {
		t.Fatal("the other user is root")
	}
	if _, err := os.ReadFile(os.Getenv("MEMMINER_OTHER_USER_TOKEN_FILE")); err != nil {
		t.Logf("token unreadable: %v", err)
	} else {
		t.Errorf("the other user read the token")
	}
	code, body := post(t, os.Getenv("MEMMINER_OTHER_USER_URL"), initializeBody, nil)
	if code == http.StatusOK {
		t.Errorf("the other user initialised a session: %s", body)
	}
	t.Logf("refused: %d", code)
}

// TestMCPHTTPNoAuth: --no-auth serves without the token, and warns.
func TestMCPHTTPNoAuth(t *testing.T) {
	c := newMinedCLI(t)
	s := newMCPServerFor(t, c, "jim")
	o := defaultHTTPOptions()
	o.noAuth = true
	var warned strings.Builder
	s.a.stderr = &warned
	if err := s.a.prepareHTTP(&o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warned.String(), "every local user can read and write") {
		t.Errorf("no warning: %q", warned.String())
	}
	hs := httptest.NewServer(s.httpHandler(o))
	defer hs.Close()
	if code, body := post(t, hs.URL+"/mcp", initializeBody, nil); code != http.StatusOK {
		t.Errorf("--no-auth: %d %s", code, body)
	}
	for _, bad := range []httpOptions{{idle: 0, maxSessions: 1}, {idle: time.Minute, maxSessions: 0}, {idle: time.Minute, maxSessions: 1, origins: []string{"localhost:6274"}}} {
		if err := s.a.prepareHTTP(&bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestRunMetricsToken: run --metrics-token serves the metrics port only
// to scrapes that send the token memminer mcp token prints.
func TestRunMetricsToken(t *testing.T) {
	c := newCLI(t)
	r := startRun(t, c, c.hive, "--metrics-addr", "127.0.0.1:0", "--metrics-token")
	st := r.idle(t, c)
	if st.Daemon == nil || st.Daemon.Metrics == nil {
		t.Fatalf("status: %+v", st.Daemon)
	}
	url := "http://" + *st.Daemon.Metrics + "/metrics"
	token := strings.TrimSpace(c.ok("mcp", "token"))
	for _, tt := range []struct {
		client *http.Client
		code   int
	}{{http.DefaultClient, http.StatusUnauthorized}, {bearerClient(token), http.StatusOK}} {
		resp, err := tt.client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.code || (tt.code == http.StatusOK && !strings.Contains(string(body), `memminer_notes{wing="dwight"}`)) {
			t.Errorf("scrape: %s\n%.300s", resp.Status, body)
		}
	}
}
