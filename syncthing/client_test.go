package syncthing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

func TestNewClient(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"", DefaultURL, false},
		{"127.0.0.1:8385", "http://127.0.0.1:8385", false},
		{"https://[::1]:8443/", "https://[::1]:8443", false},
		{"http://127.0.0.1:8384/prefix/?q=1#f", "http://127.0.0.1:8384/prefix", false},
		{"ftp://127.0.0.1:21", "", true},
		{"http://", "", true},
		{"http://user:pw@127.0.0.1:8384", "", true},
		{"http://bad host:1", "", true},
	}
	for _, tt := range tests {
		c, err := NewClient(tt.in, "k")
		if (err != nil) != tt.wantErr {
			t.Errorf("NewClient(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && c.BaseURL() != tt.want {
			t.Errorf("NewClient(%q).BaseURL() = %q, want %q", tt.in, c.BaseURL(), tt.want)
		}
	}
}

// TestClientErrors drives every method through broken answers and checks
// the error class and that the API key never shows.
func TestClientErrors(t *testing.T) {
	t.Parallel()
	calls := map[string]func(ctx context.Context, c *Client) error{
		"Ping":         func(ctx context.Context, c *Client) error { return c.Ping(ctx) },
		"SystemStatus": func(ctx context.Context, c *Client) error { _, err := c.SystemStatus(ctx); return err },
		"Folders":      func(ctx context.Context, c *Client) error { _, err := c.Folders(ctx); return err },
		"Devices":      func(ctx context.Context, c *Client) error { _, err := c.Devices(ctx); return err },
		"Events": func(ctx context.Context, c *Client) error {
			_, err := c.Events(ctx, 3, []string{EventItemFinished}, time.Second)
			return err
		},
		"DiskEvents": func(ctx context.Context, c *Client) error { _, err := c.DiskEvents(ctx, 0, time.Second); return err },
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		is      error  // errors.Is target, if any
		text    string // must appear in the error
	}{
		{"malformed JSON", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"ping": "pong", "myID": [`)
		}, nil, "decode answer"},
		{"wrong JSON shape", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `"just a string"`)
		}, nil, "decode answer"},
		{"wrong key", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "CSRF Error", http.StatusForbidden)
		}, ErrUnauthorized, "API key rejected"},
		{"unauthorized", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "Not Authorized", http.StatusUnauthorized)
		}, ErrUnauthorized, "API key rejected"},
		{"server error echoing the key", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "bad request with key "+r.Header.Get(APIKeyHeader), http.StatusInternalServerError)
		}, nil, "HTTP 500 Internal Server Error: bad request with key [redacted]"},
		{"empty 200", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
		}, ErrEmptyBody, "empty response body"},
		{"status then nothing", func(w http.ResponseWriter, r *http.Request) {
			// Like Syncthing dying mid-poll: header flushed, connection cut.
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}, nil, "syncthing GET"},
		{"hangs", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, ErrTimeout, "no answer in time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			// Only a hung server is meant to time out; under load an
			// answer can take longer than any short timeout.
			timeout := time.Until(testutil.WaitDeadline(t))
			if tt.is == ErrTimeout {
				timeout = 200 * time.Millisecond
			}
			c, err := NewClient(srv.URL, fakeKey, WithRequestTimeout(timeout))
			if err != nil {
				t.Fatal(err)
			}
			for name, call := range calls {
				if tt.name == "hangs" && (name == "Events" || name == "DiskEvents") {
					continue // covered by TestEventsTimeout
				}
				err := call(context.Background(), c)
				if err == nil {
					t.Errorf("%s: no error", name)
					continue
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("%s: err = %v, want errors.Is %v", name, err, tt.is)
				}
				if !strings.Contains(err.Error(), tt.text) {
					t.Errorf("%s: err = %q, want it to contain %q", name, err, tt.text)
				}
				if strings.Contains(err.Error(), fakeKey) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), fakeKey) {
					t.Errorf("%s: error leaks the API key: %v", name, err)
				}
			}
		})
	}
}

func TestEventsTimeout(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, fakeKey, WithRequestTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.DiskEvents(context.Background(), 0, time.Millisecond)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}

	// A cancel by the caller is reported as such, not as a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err = c.Events(ctx, 0, nil, time.Minute)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("cancelled: err = %v, want context.Canceled", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := NewClient(addr, fakeKey)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "syncthing GET /rest/system/ping") || strings.Contains(err.Error(), fakeKey) {
		t.Fatalf("err = %v", err)
	}
}

func TestClientAgainstFake(t *testing.T) {
	t.Parallel()
	f := newFakeSyncthing(t)
	peer := testDeviceID("peer")
	f.addDevice(peer, "dwight-laptop")
	f.addFolder("hive", "Hive", "~/hive")
	c := f.client(t)
	ctx := context.Background()

	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := c.SystemStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.MyID != f.myID || !st.StartTime.Equal(f.startTime) || st.Tilde != "/home/fake" {
		t.Errorf("SystemStatus = %+v", st)
	}

	folders, err := c.Folders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hive, ok := folders["hive"]
	if !ok || hive.Label != "Hive" || len(hive.Devices) != 1 || hive.Devices[0] != f.myID {
		t.Fatalf("Folders = %+v", folders)
	}
	if got := hive.AbsPath(st.Tilde); got != "/home/fake/hive" {
		t.Errorf("AbsPath = %q", got)
	}

	devices, err := c.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if devices[peer].Name != "dwight-laptop" || devices[f.myID].Name != "self" {
		t.Fatalf("Devices = %+v", devices)
	}
	d, ok := DeviceByShort(devices, peer.Short())
	if !ok || d.ID != peer || d.DisplayName() != "dwight-laptop" || d.Short() != peer.Short() {
		t.Errorf("DeviceByShort = %+v, %v", d, ok)
	}
	if _, ok := DeviceByShort(devices, "AAAAAAA"); ok {
		t.Error("DeviceByShort matched an unknown short id")
	}

	f.emitDisk("hive", "a.md", "modified")
	f.emit("items", EventItemFinished, map[string]any{"folder": "hive", "item": "a.md", "type": "file", "action": "update", "error": nil})
	f.emit("items", EventLocalIndexUpdated, map[string]any{"folder": "hive", "filenames": []string{"a.md", "b.md"}, "sequence": 7})

	disk, err := c.DiskEvents(ctx, 0, time.Second)
	if err != nil || len(disk) != 1 {
		t.Fatalf("DiskEvents = %v, %v", disk, err)
	}
	dc, err := disk[0].DiskChange()
	if err != nil || dc.Folder != "hive" || dc.Path != "a.md" || dc.Action != "modified" || dc.Type != "file" {
		t.Errorf("DiskChange = %+v, %v", dc, err)
	}
	items, err := c.Events(ctx, 0, itemEventTypes, time.Second)
	if err != nil || len(items) != 2 {
		t.Fatalf("Events = %v, %v", items, err)
	}
	itf, err := items[0].ItemFinished()
	if err != nil || itf.Item != "a.md" || itf.Error != nil || itf.Action != "update" {
		t.Errorf("ItemFinished = %+v, %v", itf, err)
	}
	liu, err := items[1].LocalIndexUpdated()
	if err != nil || len(liu.Filenames) != 2 || liu.Sequence != 7 {
		t.Errorf("LocalIndexUpdated = %+v, %v", liu, err)
	}
	// since filters: nothing newer than the last id, so the poll times out empty.
	later, err := c.Events(ctx, items[1].ID, itemEventTypes, time.Second)
	if err != nil || len(later) != 0 {
		t.Errorf("Events after last id = %v, %v", later, err)
	}
	if _, err := (Event{Type: "X", Data: []byte(`[`)}).DiskChange(); err == nil {
		t.Error("DiskChange of malformed data: no error")
	}
}

func TestEventsQuery(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+"?"+r.URL.RawQuery)
		if r.Header.Get(APIKeyHeader) != fakeKey {
			t.Errorf("missing API key header")
		}
		io.WriteString(w, "[]")
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, fakeKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Events(ctx, 41, []string{"ItemFinished", "LocalIndexUpdated"}, 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DiskEvents(ctx, -3, 0); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/rest/events?events=ItemFinished%2CLocalIndexUpdated&since=41&timeout=2",
		"/rest/events/disk?since=0&timeout=60",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestClientNeverShowsKey(t *testing.T) {
	c, err := NewClient("", fakeKey)
	if err != nil {
		t.Fatal(err)
	}
	var buf logBuffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("client", "c", c)
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("client", "c", c)
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), buf.String()} {
		if strings.Contains(s, fakeKey) {
			t.Errorf("key visible in %q", s)
		}
		if !strings.Contains(s, "127.0.0.1:8384") {
			t.Errorf("URL missing from %q", s)
		}
	}
}
