package syncthing

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// fakeKey is the API key of the fake Syncthing.
const fakeKey = "fake-api-key-Zq7YkR2m"

// fakeSyncthing imitates the parts of Syncthing's REST API the package
// uses: API key check, system status, config folders/devices and the two
// buffered, long-polled event streams whose ids restart on restart.
type fakeSyncthing struct {
	t      *testing.T
	myID   DeviceID
	addr   string
	apiKey string

	mu        sync.Mutex
	srv       *http.Server
	startTime time.Time
	uptime    int
	folders   []fakeFolder
	devices   []fakeDevice
	streams   map[string]*fakeStream
	wake      chan struct{} // closed and replaced whenever an event is added
	hook      func(w http.ResponseWriter, r *http.Request) bool
	requests  map[string]int
	up        bool
}

type fakeFolder struct {
	ID, Label, Path string
}

type fakeDevice struct {
	ID   DeviceID
	Name string
}

type fakeStream struct {
	events []Event
	next   int
}

// testDeviceID derives a valid device id from a word.
func testDeviceID(word string) DeviceID {
	return NewDeviceID([]byte(word))
}

// newFakeSyncthing starts a fake on a random loopback port.
func newFakeSyncthing(t *testing.T) *fakeSyncthing {
	t.Helper()
	f := &fakeSyncthing{
		t:         t,
		myID:      testDeviceID("self"),
		apiKey:    fakeKey,
		startTime: time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC),
		requests:  map[string]int{},
		wake:      make(chan struct{}),
	}
	f.resetStreams()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	f.serve(ln)
	t.Cleanup(f.down)
	return f
}

func (f *fakeSyncthing) url() string { return "http://" + f.addr }

func (f *fakeSyncthing) client(t *testing.T, opts ...Option) *Client {
	t.Helper()
	c, err := NewClient(f.url(), fakeKey, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fakeSyncthing) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(f.handle), ErrorLog: nil}
	f.mu.Lock()
	f.srv, f.up = srv, true
	f.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// down closes the listener and every open connection, like a killed process.
func (f *fakeSyncthing) down() {
	f.mu.Lock()
	srv := f.srv
	f.up = false
	f.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// upAgain listens on the same address again.
func (f *fakeSyncthing) upAgain() {
	f.t.Helper()
	var ln net.Listener
	// The port can take a moment to become free.
	testutil.Eventually(f.t, "re-listen on "+f.addr, func(context.Context) (bool, error) {
		var err error
		ln, err = net.Listen("tcp", f.addr)
		return err == nil, err
	})
	f.serve(ln)
}

// restart simulates a Syncthing restart: new start time, event ids from 1.
func (f *fakeSyncthing) restart() {
	f.mu.Lock()
	f.startTime = f.startTime.Add(time.Minute)
	f.uptime = 0
	f.mu.Unlock()
	f.resetStreams()
}

// restartSameSecond simulates a restart that keeps the (one-second
// resolution) start time: only the uptime goes backwards.
func (f *fakeSyncthing) restartSameSecond() {
	f.mu.Lock()
	f.uptime = 0
	f.mu.Unlock()
	f.resetStreams()
}

// age advances the reported uptime.
func (f *fakeSyncthing) age(seconds int) {
	f.mu.Lock()
	f.uptime += seconds
	f.mu.Unlock()
}

func (f *fakeSyncthing) resetStreams() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.streams = map[string]*fakeStream{"disk": {next: 1}, "items": {next: 1}}
	close(f.wake)
	f.wake = make(chan struct{})
}

func (f *fakeSyncthing) addFolder(id, label, path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.folders = append(f.folders, fakeFolder{id, label, path})
}

func (f *fakeSyncthing) addDevice(id DeviceID, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.devices = append(f.devices, fakeDevice{id, name})
}

func (f *fakeSyncthing) setHook(h func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = h
}

func (f *fakeSyncthing) requestCount(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[path]
}

// emit appends an event to a stream ("disk" or "items") and returns its id.
func (f *fakeSyncthing) emit(stream, typ string, data any) int {
	raw, err := json.Marshal(data)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.streams[stream]
	ev := Event{ID: s.next, GlobalID: s.next, Time: time.Now(), Type: typ, Data: raw}
	s.next++
	s.events = append(s.events, ev)
	close(f.wake)
	f.wake = make(chan struct{})
	return ev.ID
}

// emitDisk emits a LocalChangeDetected for a file.
func (f *fakeSyncthing) emitDisk(folder, path, action string) int {
	return f.emit("disk", EventLocalChangeDetected, map[string]string{
		"folder": folder, "folderID": folder, "label": folder, "action": action,
		"type": "file", "path": path, "modifiedBy": "AAAAAAA",
	})
}

func (f *fakeSyncthing) handle(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests[r.URL.Path]++
	hook := f.hook
	f.mu.Unlock()
	if r.Header.Get(APIKeyHeader) != f.apiKey {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	if hook != nil && hook(w, r) {
		return
	}
	switch r.URL.Path {
	case "/rest/system/ping":
		writeJSON(w, map[string]string{"ping": "pong"})
	case "/rest/system/status":
		f.mu.Lock()
		st := map[string]any{"myID": f.myID.String(), "startTime": f.startTime, "uptime": f.uptime, "tilde": "/home/fake"}
		f.mu.Unlock()
		writeJSON(w, st)
	case "/rest/config/folders":
		f.mu.Lock()
		var out []map[string]any
		for _, fo := range f.folders {
			out = append(out, map[string]any{
				"id": fo.ID, "label": fo.Label, "path": fo.Path, "type": "sendreceive",
				"devices": []map[string]string{{"deviceID": f.myID.String()}},
			})
		}
		f.mu.Unlock()
		writeJSON(w, out)
	case "/rest/config/devices":
		f.mu.Lock()
		out := []map[string]string{{"deviceID": f.myID.String(), "name": "self"}}
		for _, d := range f.devices {
			out = append(out, map[string]string{"deviceID": d.ID.String(), "name": d.Name})
		}
		f.mu.Unlock()
		writeJSON(w, out)
	case "/rest/events/disk":
		f.events(w, r, "disk")
	case "/rest/events":
		if r.URL.Query().Get("limit") != "" && r.URL.Query().Get("since") != "" {
			f.t.Errorf("request combines limit and since: %s", r.URL.RawQuery)
		}
		f.events(w, r, "items")
	default:
		http.NotFound(w, r)
	}
}

// events answers a long-poll like Syncthing: status line first, then the
// events after since once there are any or the timeout passed.
func (f *fakeSyncthing) events(w http.ResponseWriter, r *http.Request, stream string) {
	q := r.URL.Query()
	since, _ := strconv.Atoi(q.Get("since"))
	timeout := 60 * time.Second
	if s, err := strconv.Atoi(q.Get("timeout")); err == nil {
		timeout = time.Duration(s) * time.Second
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		var out []Event
		for _, ev := range f.streams[stream].events {
			if ev.ID > since {
				out = append(out, ev)
			}
		}
		wake := f.wake
		f.mu.Unlock()
		if len(out) > 0 {
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		select {
		case <-wake:
		case <-deadline.C:
			_, _ = w.Write([]byte("[]"))
			return
		case <-r.Context().Done():
			return
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// logBuffer collects slog output for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// count returns how many log lines contain s.
func (b *logBuffer) count(s string) int {
	n := 0
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// countingTransport counts round trips, failed ones separately.
type countingTransport struct {
	rt            http.RoundTripper
	total, failed atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.total.Add(1)
	resp, err := c.rt.RoundTrip(r)
	if err != nil {
		c.failed.Add(1)
	}
	return resp, err
}
