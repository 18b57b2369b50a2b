//go:build unix

package daemon

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// get fetches url with client, returning the status and body.
func get(t *testing.T, client *http.Client, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// socketClient is an HTTP client that dials the unix socket path.
func socketClient(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
}

// TestMetricsPrivate: with MetricsToken the metrics port answers only a
// scrape that sends the token, another local user included; the control
// socket serves the same exposition to the user, and the other user
// cannot reach it.
func TestMetricsPrivate(t *testing.T) {
	if os.Getenv("MEMMINER_OTHER_USER_METRICS") != "" {
		otherUserScrapes(t)
		return
	}
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	const token = "metrics-token-0123456789"
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, MetricsAddr: "127.0.0.1:0", MetricsToken: token})
	r.idle(t, 1)
	url := "http://" + r.d.MetricsAddr() + "/metrics"
	if code, _ := get(t, http.DefaultClient, url, ""); code != http.StatusUnauthorized {
		t.Errorf("a scrape without the token: %d", code)
	}
	if code, _ := get(t, http.DefaultClient, url, "wrong-token-0123456789"); code != http.StatusUnauthorized {
		t.Errorf("a scrape with a wrong token: %d", code)
	}
	code, body := get(t, http.DefaultClient, url, token)
	if code != http.StatusOK || parseExposition(t, body)["memminer_notes"] == nil {
		t.Errorf("a scrape with the token: %d\n%s", code, body)
	}
	sock := SocketPath(filepath.Join(tmp, "palace"))
	code, body = get(t, socketClient(sock), "http://memminer/metrics", "")
	if code != http.StatusOK || !strings.Contains(body, `memminer_notes{wing="dwight"}`) {
		t.Errorf("metrics on the control socket: %d\n%s", code, body)
	}
	cmd := testutil.HelperAsOtherUser(t, "TestMetricsPrivate", "MEMMINER_OTHER_USER_METRICS="+url, "MEMMINER_OTHER_USER_SOCKET="+sock)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as another user: %v\n%s", err, out)
	}
}

// otherUserScrapes runs as the other user: neither the port without the
// token nor the control socket gives it the wing names.
func otherUserScrapes(t *testing.T) {
	if os.Getuid() == 0 {
		t.Fatal("the other user is root")
	}
	if code, body := get(t, http.DefaultClient, os.Getenv("MEMMINER_OTHER_USER_METRICS"), ""); code != http.StatusUnauthorized || strings.Contains(body, "dwight") {
		t.Errorf("the other user scraped the port: %d\n%s", code, body)
	}
	if conn, err := net.Dial("unix", os.Getenv("MEMMINER_OTHER_USER_SOCKET")); err == nil {
		conn.Close()
		t.Error("the other user reached the control socket")
	}
}
