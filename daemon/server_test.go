package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

// rawRequest sends req (a whole HTTP/1.1 request, or the start of one) on
// the daemon's socket and returns the status line of the answer, or ""
// when the daemon closed the connection without one.
func rawRequest(t *testing.T, socket, req string) string {
	t.Helper()
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Not a timing assertion: a guard so a regression fails instead of
	// hanging until the test binary's timeout.
	_ = conn.SetDeadline(testutil.WaitDeadline(t))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("no answer, and the connection is still open at the test's deadline")
		}
		return ""
	}
	resp.Body.Close()
	return resp.Status
}

func TestRawRequests(t *testing.T) {
	old := requestReadTimeout
	requestReadTimeout = 200 * time.Millisecond
	t.Cleanup(func() { requestReadTimeout = old })
	tmp := t.TempDir()
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: testHive(t, tmp)})
	r.idle(t, 1)
	socket := SocketPath(filepath.Join(tmp, "palace"))
	post := func(path, body string) string {
		return "POST " + path + " HTTP/1.1\r\nHost: memminer\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
			strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	tests := []struct {
		name, req, want string
	}{
		{"mine with an invalid wing", post("/mine", `{"path": "/tmp/x", "wing": "Bad Wing!"}`), "400"},
		{"mine with a relative path", post("/mine", `{"path": "x"}`), "400"},
		{"unknown field", post("/search", `{"query": "x", "nope": 1}`), "400"},
		// A body that never ends: the daemon answers or hangs up once
		// its read timeout passes, instead of holding the connection.
		{"body that never ends", "POST /search HTTP/1.1\r\nHost: memminer\r\nContent-Length: 1000\r\n\r\n{\"query\": ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rawRequest(t, socket, tt.req)
			if tt.want == "" {
				return // rawRequest fails the test on a hang
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("answer %q, want %s", got, tt.want)
			}
		})
	}
}

// FuzzRequestDecoding: the socket's request decoding either fills the
// request (which then survives a JSON round trip unchanged) or answers 400
// with a JSON error body; it never panics.
func FuzzRequestDecoding(f *testing.F) {
	f.Add(0, []byte(`{"query": "how is the web bundle built", "results": 3, "wing": "dwight"}`))
	f.Add(1, []byte(`{"path": "/srv/hive", "wing": "pam", "dry_run": true}`))
	f.Add(2, []byte(`{"wing": "junk", "force": true}`))
	f.Add(0, []byte(`{"query": "x", "nope": 1}`))
	f.Add(1, []byte(`{"path": 5}`))
	f.Add(0, []byte(`{"query": "\ud800"} trailing`))
	f.Add(2, []byte(`[]`))
	f.Fuzz(func(t *testing.T, kind int, body []byte) {
		var req any
		switch ((kind % 3) + 3) % 3 {
		case 0:
			req = &api.SearchRequest{}
		case 1:
			req = &api.MineRequest{}
		default:
			req = &api.ForgetRequest{}
		}
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		if readJSON(w, r, req) {
			data, err := json.Marshal(req)
			if err != nil {
				t.Fatalf("decoded %+v does not encode: %v", req, err)
			}
			again := reflect.New(reflect.TypeOf(req).Elem()).Interface()
			if err := json.Unmarshal(data, again); err != nil || !reflect.DeepEqual(req, again) {
				t.Fatalf("round trip of %s: %+v != %+v (%v)", data, req, again, err)
			}
			return
		}
		var eb daemonclient.ErrorBody
		if w.Code != http.StatusBadRequest || json.Unmarshal(w.Body.Bytes(), &eb) != nil || eb.Code != daemonclient.CodeBadRequest || eb.Error == "" {
			t.Fatalf("refused %q with %d %q", body, w.Code, w.Body.String())
		}
	})
}
