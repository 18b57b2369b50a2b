package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncthing/syncthing/lib/protocol"

	"github.com/memminer/memminer/syncthing"
)

// fakeSyncthing answers the REST calls HiveReplication makes, for one
// folder at /sync/hive shared with one other device.
func fakeSyncthing(t *testing.T, status int) *syncthing.Client {
	t.Helper()
	return fakeSyncthingPeer(t, status, true)
}

// fakeSyncthingPeer is fakeSyncthing with the other device connected or
// not (then last seen at 10:40).
func fakeSyncthingPeer(t *testing.T, status int, connected bool) *syncthing.Client {
	t.Helper()
	me, peer := protocol.NewDeviceID([]byte("me")), protocol.NewDeviceID([]byte("peer"))
	answers := map[string]string{
		"/rest/system/status":      `{"myID": "` + me.String() + `", "startTime": "2026-12-01T10:00:00Z", "tilde": "/home/ops"}`,
		"/rest/config/folders":     `[{"id": "hive", "label": "Hive", "path": "/sync/hive", "devices": [{"deviceID": "` + me.String() + `"}, {"deviceID": "` + peer.String() + `"}]}]`,
		"/rest/db/status":          `{"state": "syncing", "stateChanged": "2026-12-01T11:00:00Z", "needFiles": 3, "needDeletes": 1, "needBytes": 2048}`,
		"/rest/config/devices":     `[{"deviceID": "` + me.String() + `", "name": "here"}, {"deviceID": "` + peer.String() + `", "name": "laptop"}]`,
		"/rest/system/connections": `{"connections": {"` + peer.String() + `": {"connected": ` + strconv.FormatBool(connected) + `, "startedAt": "2026-12-01T10:30:00Z"}}}`,
		"/rest/stats/device":       `{"` + peer.String() + `": {"lastSeen": "2026-12-01T10:40:00Z"}}`,
		"/rest/db/completion":      `{"completion": 87.5, "needBytes": 4096, "needItems": 2, "remoteState": "valid"}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status != http.StatusOK {
			w.WriteHeader(status)
			return
		}
		body, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	c, err := syncthing.NewClient(srv.URL, "test-api-key-0123")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHiveReplication(t *testing.T) {
	ctx := context.Background()
	r := HiveReplication(ctx, fakeSyncthing(t, http.StatusOK), "/sync/hive")
	if r == nil || r.Folder != "hive" || r.Label != "Hive" || r.State != "syncing" || r.InSync || r.InSyncSince != nil ||
		r.NeedFiles != 4 || r.NeedBytes != 2048 || r.DevicesConnected != 1 || len(r.Devices) != 1 || r.Devices[0].Name != "laptop" || r.Error != nil {
		t.Fatalf("replication = %+v", r)
	}
	if !r.StateKnown || r.IsolatedSince != nil || r.IsolatedSeconds != nil || r.Devices[0].Completion == nil || *r.Devices[0].Completion != 87.5 ||
		*r.Devices[0].NeedBytes != 4096 || r.Devices[0].ConnectedSince == nil || !r.Devices[0].ConnectedSince.Equal(time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)) {
		t.Fatalf("replication with the peer connected = %+v, device %+v", r, r.Devices[0])
	}
	// Cut off: the state is unknown, and since when it is isolated.
	now := time.Date(2026, 12, 1, 12, 40, 0, 0, time.UTC)
	r = hiveReplication(ctx, fakeSyncthingPeer(t, http.StatusOK, false), "/sync/hive", now)
	if r == nil || r.StateKnown || r.InSync || r.DevicesConnected != 0 || r.IsolatedSince == nil ||
		!r.IsolatedSince.Equal(time.Date(2026, 12, 1, 10, 40, 0, 0, time.UTC)) || r.IsolatedSeconds == nil || *r.IsolatedSeconds != 7200 ||
		r.Devices[0].LastSeen == nil || r.Devices[0].ConnectedSince != nil {
		t.Fatalf("isolated replication = %+v", r)
	}
	if r := HiveReplication(ctx, fakeSyncthing(t, http.StatusOK), "/elsewhere/hive"); r == nil || r.Error == nil || !strings.Contains(*r.Error, "no Syncthing folder holds it") || r.Devices == nil {
		t.Fatalf("hive in no folder: %+v", r)
	}
	if r := HiveReplication(ctx, fakeSyncthing(t, http.StatusForbidden), "/sync/hive"); r == nil || r.Error == nil || !strings.Contains(*r.Error, "API key rejected") {
		t.Fatalf("key refused: %+v", r)
	}
	// Nothing listens on port 1.
	closed, err := syncthing.NewClient("http://127.0.0.1:1", "test-api-key-0123")
	if err != nil {
		t.Fatal(err)
	}
	if r := HiveReplication(ctx, closed, "/sync/hive"); r != nil {
		t.Fatalf("Syncthing not answering: %+v", r)
	}
	if r := HiveReplication(ctx, nil, "/sync/hive"); r != nil {
		t.Fatalf("no client: %+v", r)
	}
}
