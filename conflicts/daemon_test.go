package conflicts_test

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

// The daemon, its socket client and api import package conflicts, so its
// own tests cannot import them: this file, of the external test package,
// runs their daemon for them (conflicts.StartTestDaemon).
func init() {
	conflicts.StartTestDaemon = startTestDaemon
}

// counted is the daemon's conflicts component, telling the test of each
// walk after a scan of the daemon.
type counted struct {
	daemon.ConflictsComponent
	after func()
}

func (c counted) Scanned(ctx context.Context, h *daemon.Host) {
	c.ConflictsComponent.Scanned(ctx, h)
	c.after()
}

func startTestDaemon(o conflicts.TestDaemonOptions) (conflicts.TestDaemon, conflicts.TestClient, error) {
	d, err := daemon.New(context.Background(), daemon.Options{
		Palace:       o.Palace,
		Hive:         o.Hive,
		Agents:       o.Agents,
		MineInterval: o.Interval,
		Debounce:     20 * time.Millisecond,
		Logger:       o.Logger,
		Components:   []daemon.Component{counted{daemon.ConflictsComponent{Component: o.Component}, o.Scanned}},
	})
	if err != nil {
		return nil, nil, err
	}
	return d, testClient{daemonclient.NewClient(o.Palace)}, nil
}

// testClient is the socket client as conflicts.TestClient.
type testClient struct{ *daemonclient.Client }

func (c testClient) Get(ctx context.Context, path string, q url.Values, out any) error {
	return c.Client.Get(ctx, path, q, out)
}

func (c testClient) Status(ctx context.Context) (conflicts.TestStatus, error) {
	st, err := c.Client.Status(ctx)
	if err != nil {
		return conflicts.TestStatus{}, err
	}
	return conflicts.TestStatus{ConflictsOpen: st.ConflictsOpen, Scans: st.Daemon.Scans, HasComponent: st.Daemon.Components[conflicts.Name] != nil}, nil
}

func (c testClient) Search(ctx context.Context, query string) ([]conflicts.TestHit, error) {
	res, err := c.Client.Search(ctx, api.SearchRequest{Query: query, Results: 20})
	var hits []conflicts.TestHit
	for _, h := range res.Results {
		hits = append(hits, conflicts.TestHit{Wing: h.Wing, Text: h.Text, Source: h.Source})
	}
	return hits, err
}

func (c testClient) Code(err error) string {
	var re *daemonclient.RemoteError
	if errors.As(err, &re) {
		return re.Code
	}
	return ""
}
