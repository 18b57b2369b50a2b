// Package sttest runs real Syncthing instances on the loopback interface
// for tests: each [Node] is a `syncthing serve` process with its own home
// under t.TempDir(), random free ports, discovery, relays, NAT, usage
// reporting and upgrades turned off. [StartPair] connects two nodes and
// shares the folder [FolderID] between them, [StartCluster] any number; [ProduceConflict] makes
// Syncthing create a real conflict copy.
//
// Tests that use it call [Binary] (directly or through StartPair):
// with the environment variable CI unset a missing syncthing binary skips
// the test; under CI it fails it. Processes are killed in t.Cleanup.
package sttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/syncthing"
)

// FolderID is the id (and label) of the folder StartPair shares.
const FolderID = "hive"

// EnvBinary names an environment variable that may point at the syncthing
// binary to use instead of the one on PATH.
const EnvBinary = "MEMMINER_TEST_SYNCTHING"

// beforeStart, when set by a test, runs right before each `serve`.
var beforeStart func(*Node)

// startAttempts bounds how often a node is started on fresh ports when
// one it was given is taken.
const startAttempts = 5

// InCI reports whether the environment variable CI is set to something
// other than "", "0" or "false".
func InCI() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("CI"))) {
	case "", "0", "false":
		return false
	}
	return true
}

// Binary returns the path of the syncthing binary ($MEMMINER_TEST_SYNCTHING or
// "syncthing" on PATH). When there is none it skips the test, or fails it
// under CI, with a hint to run .ci/setup-syncthing.sh.
func Binary(t testing.TB) string {
	t.Helper()
	name := os.Getenv(EnvBinary)
	if name == "" {
		name = "syncthing"
	}
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("syncthing binary not found (%v); run .ci/setup-syncthing.sh or set %s", err, EnvBinary)
	if InCI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Node is one running Syncthing instance.
type Node struct {
	t          testing.TB
	bin        string
	name       string
	dir        string
	home       string
	folderPath string
	guiPort    int
	listenPort int
	apiKey     string
	generated  []byte // config.xml as `syncthing generate` wrote it
	id         syncthing.DeviceID
	client     *syncthing.Client

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// newNode generates a fresh Syncthing home for a device called name,
// starts it and waits until its REST API answers. It does not call
// t.Fatal, so it can run off the test goroutine.
func newNode(t testing.TB, bin, name string) (*Node, error) {
	dir := t.TempDir()
	n := &Node{
		t:          t,
		bin:        bin,
		name:       name,
		dir:        dir,
		home:       filepath.Join(dir, "home"),
		folderPath: filepath.Join(dir, FolderID),
	}
	var err error
	if n.apiKey, err = randomKey(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(n.folderPath, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := testutil.WaitContext(t)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "generate", "--home="+n.home, "--no-default-folder").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("syncthing generate for %s: %w\n%s", name, err, out)
	}
	if n.generated, err = os.ReadFile(n.ConfigPath()); err != nil {
		return nil, fmt.Errorf("read generated config: %w", err)
	}
	t.Cleanup(n.Stop)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sttest: last lines of %s's log:\n%s", name, n.logTail(40))
		}
	})
	// Ports are picked so that a clash is rare (see pickPorts), and a
	// clash is retried with fresh ones: the process whose ports these
	// were is none of ours to stop.
	for attempt := 1; ; attempt++ {
		if err := n.startOnFreshPorts(); err == nil {
			break
		} else if !errors.Is(err, errPortTaken) || attempt == startAttempts {
			return nil, err
		}
		t.Logf("sttest: %s: a port was taken before Syncthing bound it; retrying with fresh ports", name)
	}
	return n, nil
}

// StartPair starts two nodes, "alpha" and "bravo", in parallel, makes them
// know each other on 127.0.0.1, shares [FolderID] between them (file
// watcher delay 1 s) and waits until they are connected.
func StartPair(t testing.TB) (*Node, *Node) {
	t.Helper()
	nodes := StartCluster(t, "alpha", "bravo")
	return nodes[0], nodes[1]
}

// StartCluster starts one node per name, in parallel, makes every two of
// them know each other on 127.0.0.1, shares [FolderID] among all of them
// (file watcher delay 1 s) and waits until every two are connected.
func StartCluster(t testing.TB, names ...string) []*Node {
	t.Helper()
	bin := Binary(t)
	start := time.Now()
	nodes := make([]*Node, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { nodes[i], errs[i] = newNode(t, bin, name) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("sttest: %v", err)
	}
	ctx, cancel := testutil.WaitContext(t)
	defer cancel()
	// Of every two nodes only the earlier one dials: when both dial at
	// once, Syncthing 1.19 can stall for 20 s in the Hello exchange. The
	// later node is set up first, so that the earlier one's first dial
	// (right when it learns the later's address) is accepted; a rejected
	// dial is retried only after 5 s. For the same reason, if a later
	// node restarts, the earlier ones reconnect within about 5 s.
	for k := len(nodes) - 1; k >= 0; k-- {
		n := nodes[k]
		for j, peer := range nodes {
			if j == k {
				continue
			}
			if err := n.AddDevice(ctx, peer, j > k); err != nil {
				t.Fatalf("sttest: %v", err)
			}
		}
		if err := n.ShareFolder(ctx, FolderID, n.folderPath, nodes...); err != nil {
			t.Fatalf("sttest: %v", err)
		}
	}
	up := time.Since(start)
	for i := range nodes {
		for j := i + 1; j < len(nodes); j++ {
			WaitConnected(t, nodes[i], nodes[j])
		}
	}
	var ids []string
	for _, n := range nodes {
		ids = append(ids, fmt.Sprintf("%s (%s)", n.name, n.Short()))
	}
	t.Logf("sttest: %s up after %s, connected after %s",
		strings.Join(ids, ", "), up.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return nodes
}

// Name returns the device name the node has in both nodes' configs.
func (n *Node) Name() string { return n.name }

// ID returns the node's device id.
func (n *Node) ID() syncthing.DeviceID { return n.id }

// Short returns the node's 7-character short device id.
func (n *Node) Short() string { return n.id.Short() }

// ConfigPath returns the node's config.xml.
func (n *Node) ConfigPath() string { return filepath.Join(n.home, syncthing.ConfigFileName) }

// FolderPath returns the root of the node's copy of [FolderID].
func (n *Node) FolderPath() string { return n.folderPath }

// URL returns the base URL of the node's REST API.
func (n *Node) URL() string { return "http://127.0.0.1:" + strconv.Itoa(n.guiPort) }

// APIKey returns the node's API key.
func (n *Node) APIKey() string { return n.apiKey }

// Client returns a REST client for the node.
func (n *Node) Client() *syncthing.Client { return n.client }

// ListenAddress returns the node's sync protocol address.
func (n *Node) ListenAddress() string { return "tcp://127.0.0.1:" + strconv.Itoa(n.listenPort) }

// Restart kills the node (SIGKILL, like a crash) and serves the same home
// on the same ports again, waiting until the REST API answers.
func (n *Node) Restart() {
	n.t.Helper()
	n.Stop()
	n.Start()
}

// Start serves a stopped node's home on its ports again, waiting until the
// REST API answers.
func (n *Node) Start() {
	n.t.Helper()
	if err := n.start(); err != nil {
		n.t.Fatalf("sttest: start %s: %v", n.name, err)
	}
}

// Stop kills the node and waits for the process to exit. Stopping a
// stopped node does nothing.
func (n *Node) Stop() {
	n.mu.Lock()
	cmd, done, log := n.cmd, n.done, n.log
	n.cmd, n.done, n.log = nil, nil, nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	kill(cmd)
	<-done
	_ = log.Close()
}

// start serves the node's home and waits until its REST API answers and
// its sync listener is bound. A port found taken is reported as
// errPortTaken, with the process stopped.
func (n *Node) start() error {
	logPath := filepath.Join(n.dir, "syncthing.log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	var logStart int64
	if fi, err := log.Stat(); err == nil {
		logStart = fi.Size()
	}
	cmd := exec.Command(n.bin, "serve",
		"--home="+n.home,
		"--no-browser", "--no-restart", "--no-upgrade",
		"--gui-address="+n.URL(),
		"--gui-apikey="+n.apiKey,
	)
	cmd.Env = append(os.Environ(),
		"HOME="+n.dir,
		"STNOUPGRADE=1",
		"STNORESTART=1",
		"STNODEFAULTFOLDER=1",
		// Run Syncthing itself, without the monitor process that would
		// otherwise fork it (and outlive a SIGKILL).
		"STMONITORED=yes",
	)
	isolate(cmd)
	cmd.Stdout, cmd.Stderr = log, log
	if beforeStart != nil {
		beforeStart(n)
	}
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("start syncthing %s: %w", n.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	n.mu.Lock()
	n.cmd, n.done, n.log = cmd, done, log
	n.mu.Unlock()
	if err := n.waitStarted(done, logPath, logStart); err != nil {
		n.Stop()
		return err
	}
	return nil
}

// waitStarted waits until the REST API answers and the sync listener is
// bound.
func (n *Node) waitStarted(done <-chan struct{}, logPath string, logStart int64) error {
	ctx, cancel := testutil.WaitContext(n.t)
	defer cancel()
	for {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		err := n.client.Ping(pctx)
		pcancel()
		if err == nil {
			break
		}
		select {
		case <-done:
			// Syncthing exits when it cannot bind its GUI address.
			if strings.Contains(n.logSince(logPath, logStart), "address already in use") {
				return fmt.Errorf("syncthing %s: GUI port %d: %w", n.name, n.guiPort, errPortTaken)
			}
			return fmt.Errorf("syncthing %s exited during start-up:\n%s", n.name, n.logTail(30))
		case <-ctx.Done():
			return fmt.Errorf("syncthing %s did not answer before the test's deadline: %w", n.name, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return n.waitListening(ctx)
}

// waitListening waits until the node's sync port answers TLS with the
// node's own certificate. Syncthing's status cannot tell a listener that
// is bound from one not yet started (both list the configured address),
// and a listener that cannot bind does not end Syncthing: it shows as an
// error in the connection service status and is retried; that is
// reported here as errPortTaken.
func (n *Node) waitListening(ctx context.Context) error {
	st, err := n.client.SystemStatus(ctx)
	if err != nil {
		return fmt.Errorf("status of %s: %w", n.name, err)
	}
	n.id = st.MyID
	addr := n.ListenAddress()
	var last error
	for {
		id, err := n.listenerID(ctx)
		if err == nil && id == n.id {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("port %d answers as device %s", n.listenPort, id.Short())
		}
		last = err
		var raw struct {
			Listeners map[string]struct {
				Error *string `json:"error"`
			} `json:"connectionServiceStatus"`
		}
		if err := n.client.DoJSON(ctx, http.MethodGet, "/rest/system/status", nil, &raw); err == nil {
			if e := raw.Listeners[addr].Error; e != nil && *e != "" {
				if strings.Contains(*e, "address already in use") {
					return fmt.Errorf("syncthing %s: sync port %d: %w", n.name, n.listenPort, errPortTaken)
				}
				last = errors.New(*e)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("syncthing %s: listener %s not up before the test's deadline: %w", n.name, addr, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// listenerID returns the device id of whoever answers TLS on the node's
// sync port.
func (n *Node) listenerID(ctx context.Context) (syncthing.DeviceID, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} // the id is checked, not a CA
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(n.listenPort)))
	if err != nil {
		return syncthing.DeviceID{}, err
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return syncthing.DeviceID{}, fmt.Errorf("port %d sent no certificate", n.listenPort)
	}
	return syncthing.NewDeviceID(certs[0].Raw), nil
}

// logSince returns what the node's log gained after offset.
func (n *Node) logSince(path string, offset int64) string {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) < offset {
		return ""
	}
	return string(data[offset:])
}

// startOnFreshPorts picks the node's two ports, writes its config and
// starts it.
func (n *Node) startOnFreshPorts() error {
	ports, err := pickPorts(2)
	if err != nil {
		return err
	}
	n.guiPort, n.listenPort = ports[0], ports[1]
	if err := n.patchConfig(); err != nil {
		return err
	}
	if n.client, err = syncthing.NewClient(n.URL(), n.apiKey, syncthing.WithRequestTimeout(10*time.Second)); err != nil {
		return err
	}
	return n.start()
}

// patchConfig turns the generated config.xml into an isolated loopback
// setup on the node's ports.
func (n *Node) patchConfig() error {
	path := n.ConfigPath()
	data := bytes.Clone(n.generated)
	options := map[string]string{
		"listenAddress":         n.ListenAddress(),
		"globalAnnounceEnabled": "false",
		"localAnnounceEnabled":  "false",
		"relaysEnabled":         "false",
		"natEnabled":            "false",
		"urAccepted":            "-1",
		"autoUpgradeIntervalH":  "0",
		"crashReportingEnabled": "false",
		"startBrowser":          "false",
		"reconnectionIntervalS": "5",
		"setLowPriority":        "false",
		"stunServer":            "",
	}
	for tag, val := range options {
		re := regexp.MustCompile(`<` + tag + `>[^<]*</` + tag + `>`)
		if !re.Match(data) {
			return fmt.Errorf("generated config %s has no <%s>", path, tag)
		}
		data = re.ReplaceAll(data, []byte("<"+tag+">"+val+"</"+tag+">"))
	}
	// Our own device entry (the first <device> with an id) gets our name.
	nameRe := regexp.MustCompile(`(<device id="[A-Z0-9-]+" name=")[^"]*(")`)
	loc := nameRe.FindSubmatchIndex(data)
	if loc == nil {
		return fmt.Errorf("generated config %s has no device entry", path)
	}
	data = slicesConcat(data[:loc[3]], []byte(n.name), data[loc[4]:])
	keyRe := regexp.MustCompile(`<apikey>[^<]*</apikey>`)
	data = keyRe.ReplaceAll(data, []byte("<apikey>"+n.apiKey+"</apikey>"))
	guiRe := regexp.MustCompile(`<address>127\.0\.0\.1:\d+</address>`)
	data = guiRe.ReplaceAll(data, []byte("<address>127.0.0.1:"+strconv.Itoa(n.guiPort)+"</address>"))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}

func slicesConcat(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}

// AddDevice adds peer to n's config under peer's name. With dial, n gets
// peer's loopback address and connects to it; without, n only accepts
// peer's connections (its address is "dynamic", and discovery is off).
func (n *Node) AddDevice(ctx context.Context, peer *Node, dial bool) error {
	addr := "dynamic"
	if dial {
		addr = peer.ListenAddress()
	}
	body := map[string]any{
		"deviceID":  peer.id.String(),
		"name":      peer.name,
		"addresses": []string{addr},
	}
	if err := n.client.DoJSON(ctx, http.MethodPost, "/rest/config/devices", body, nil); err != nil {
		return fmt.Errorf("add device %s to %s: %w", peer.name, n.name, err)
	}
	return nil
}

// ShareFolder adds folder id at path on n, shared with nodes (n itself may
// be among them), watching the disk with a 1 s delay.
func (n *Node) ShareFolder(ctx context.Context, id, path string, nodes ...*Node) error {
	var devices []map[string]string
	for _, m := range nodes {
		devices = append(devices, map[string]string{"deviceID": m.id.String()})
	}
	body := map[string]any{
		"id":               id,
		"label":            id,
		"path":             path,
		"type":             "sendreceive",
		"fsWatcherEnabled": true,
		"fsWatcherDelayS":  1,
		"rescanIntervalS":  3600,
		"devices":          devices,
	}
	if err := n.client.DoJSON(ctx, http.MethodPost, "/rest/config/folders", body, nil); err != nil {
		return fmt.Errorf("share folder %s on %s: %w", id, n.name, err)
	}
	return nil
}

// SetPaused pauses or resumes folder id on n.
func (n *Node) SetPaused(ctx context.Context, id string, paused bool) error {
	err := n.client.DoJSON(ctx, http.MethodPatch, "/rest/config/folders/"+id, map[string]bool{"paused": paused}, nil)
	if err != nil {
		return fmt.Errorf("set folder %s paused=%t on %s: %w", id, paused, n.name, err)
	}
	return nil
}

// SetDevicePaused pauses (or resumes) peer in n's config: n then neither
// connects to peer nor accepts it, as if the network between them were
// cut.
func (n *Node) SetDevicePaused(ctx context.Context, peer *Node, paused bool) error {
	err := n.client.DoJSON(ctx, http.MethodPatch, "/rest/config/devices/"+peer.id.String(), map[string]bool{"paused": paused}, nil)
	if err != nil {
		return fmt.Errorf("set device %s paused=%t on %s: %w", peer.name, paused, n.name, err)
	}
	return nil
}

// Redial makes n drop and dial peer again now, by pausing and resuming
// the device in its config, rather than wait out its reconnect backoff
// (which after a restart of peer can be half a minute).
func (n *Node) Redial(ctx context.Context, peer *Node) error {
	for _, paused := range []bool{true, false} {
		err := n.client.DoJSON(ctx, http.MethodPatch, "/rest/config/devices/"+peer.id.String(), map[string]bool{"paused": paused}, nil)
		if err != nil {
			return fmt.Errorf("set device %s paused=%t on %s: %w", peer.name, paused, n.name, err)
		}
	}
	return nil
}

// FolderState returns the state of folder id on n ("idle", "scanning",
// "syncing", ...) from /rest/db/status.
func (n *Node) FolderState(ctx context.Context, id string) (string, error) {
	var st struct {
		State string `json:"state"`
	}
	if err := n.client.DoJSON(ctx, http.MethodGet, "/rest/db/status?folder="+id, nil, &st); err != nil {
		return "", fmt.Errorf("folder %s status on %s: %w", id, n.name, err)
	}
	return st.State, nil
}

// IsConnected reports whether n has a connection to peer.
func (n *Node) IsConnected(ctx context.Context, peer *Node) (bool, error) {
	var res struct {
		Connections map[string]struct {
			Connected bool `json:"connected"`
		} `json:"connections"`
	}
	if err := n.client.DoJSON(ctx, http.MethodGet, "/rest/system/connections", nil, &res); err != nil {
		return false, fmt.Errorf("connections of %s: %w", n.name, err)
	}
	return res.Connections[peer.id.String()].Connected, nil
}

// WaitConnected waits until a and b report each other connected.
func WaitConnected(t testing.TB, a, b *Node) {
	t.Helper()
	testutil.Eventually(t, fmt.Sprintf("%s and %s to connect", a.name, b.name), func(ctx context.Context) (bool, error) {
		ab, err := a.IsConnected(ctx, b)
		if err != nil || !ab {
			return false, err
		}
		return b.IsConnected(ctx, a)
	})
}

func (n *Node) logTail(lines int) string {
	data, err := os.ReadFile(filepath.Join(n.dir, "syncthing.log"))
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

func randomKey() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random API key: %w", err)
	}
	return hex.EncodeToString(b), nil
}
