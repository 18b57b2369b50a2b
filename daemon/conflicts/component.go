package conflicts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/syncthing"
)

// Name is the component's name in logs and under daemon.components in
// status.
const Name = "conflicts"

// deviceLookupTimeout bounds the device-name lookup a scan makes.
const deviceLookupTimeout = 5 * time.Second

// requestLookupTimeout bounds it for a scan made to answer a request,
// which must not wait long on a Syncthing that hangs.
const requestLookupTimeout = time.Second

// countTimeout bounds the walk ConflictsOpen makes (it has no context).
const countTimeout = 5 * time.Second

// codeUnknownWing is the daemon's wire code for an unknown wing; a
// daemon.Client's error with it matches palace.ErrUnknownWing.
const codeUnknownWing = "unknown_wing"

// Options configure a Component. The zero value watches no Syncthing and
// alerts only in the log.
type Options struct {
	// Syncthing is the client of the local Syncthing whose event stream
	// reveals conflict copies as they appear; nil finds them by scanning
	// the hive only.
	Syncthing *syncthing.Client
	// SyncthingOff says why Syncthing is not used when Syncthing is nil
	// (shown in status), e.g. "disabled by --no-syncthing".
	SyncthingOff string
	// Watcher tunes the Syncthing watcher; its Logger defaults to the
	// daemon's.
	Watcher syncthing.WatcherOptions

	// Command, when set, is run for every new conflict: Command[0] is the
	// program, started directly (never through a shell), the rest its
	// arguments; the conflict's details are in its environment (see Env).
	// SplitCommand turns a command line into this form.
	Command []string
	// CommandTimeout bounds one run of Command (DefaultCommandTimeout).
	CommandTimeout time.Duration

	// Webhook, when set, is an http(s) URL that gets a POST of every new
	// conflict's JSON.
	Webhook string
	// WebhookAttempts bounds the attempts per conflict
	// (DefaultWebhookAttempts).
	WebhookAttempts int
	// WebhookBackoff is the wait before the first retry, doubled (with
	// jitter) after each (DefaultWebhookBackoff); WebhookMaxWait caps it
	// and any Retry-After (DefaultWebhookMaxWait).
	WebhookBackoff, WebhookMaxWait time.Duration
	// HTTPClient sends the webhook; nil means a client with a
	// DefaultWebhookTimeout timeout.
	HTTPClient *http.Client

	// Notify, when set, is called for every new conflict on the alert
	// goroutine, before Command and Webhook: for programs embedding the
	// daemon.
	Notify func(Conflict)

	// AutoMerge merges a new conflict copy at once when it merges
	// cleanly (see MergeCopies), and alerts it with ActionMerged. With
	// Syncthing, only the device named in the copy's name does, so that
	// two devices never write the same merge at once.
	AutoMerge bool
	// AutoMergeWait is how long, with AutoMerge, a device waits for the
	// device a copy names to merge it before alerting it as open
	// (DefaultAutoMergeWait when 0).
	AutoMergeWait time.Duration
	// MaxFileBytes bounds the files a merge reads (config's default when 0).
	MaxFileBytes int64
}

// Component is the conflict registry as a daemon component. Create it with
// New and pass it in daemon.Options.Components.
type Component struct {
	opts      Options
	alerts    *alerter
	ready     chan struct{} // closed once the registry is loaded and scanned
	readyOnce sync.Once

	mu       sync.Mutex // guards the fields below
	host     *daemon.Host
	log      *slog.Logger
	reg      *registry
	watcher  *syncthing.Watcher
	lastScan time.Time
	scanErr  string
	loadErr  string
	// adopt is set while the registry is being rebuilt after corruption:
	// the rebuild's finds are not alerted again.
	adopt bool
	// saveFailing is set while saving the registry fails (logged once).
	saveFailing bool
	// runCtx is Run's context; alerts left for another device's merge
	// wait in background goroutines (bg) that end with it.
	runCtx context.Context
	bg     sync.WaitGroup
}

// New returns a component with opts. It checks the webhook URL.
func New(opts Options) (*Component, error) {
	if opts.Webhook != "" {
		if err := CheckWebhook(opts.Webhook); err != nil {
			return nil, err
		}
	}
	if len(opts.Command) > 0 {
		if opts.Command[0] == "" {
			return nil, errors.New("on-conflict command: empty program name")
		}
		// Found now rather than at the first conflict, which may be weeks
		// away (and with a service manager's PATH, not a shell's).
		if _, err := exec.LookPath(opts.Command[0]); err != nil {
			return nil, fmt.Errorf("on-conflict command: %w", err)
		}
	}
	return &Component{opts: opts, alerts: newAlerter(opts), ready: make(chan struct{})}, nil
}

// Name implements daemon.Component.
func (c *Component) Name() string { return Name }

// Run loads the registry from the palace directory, reconciles it with a
// scan of the hive, then follows Syncthing's events (when configured)
// until ctx is done.
func (c *Component) Run(ctx context.Context, h *daemon.Host) error {
	// However Run ends, requests waiting for the first scan get an answer.
	defer c.markReady()
	defer c.bg.Wait()
	c.mu.Lock()
	c.host, c.runCtx = h, ctx
	c.mu.Unlock()
	log := h.Logger().With("component", Name)
	hv, err := hive.Open(h.Hive(), h.Agents())
	if err != nil {
		return err
	}
	reg := newRegistry(RegistryPath(h.Palace().Dir()), hv)
	reg.checkDir = h.Palace().CheckDir
	corrupt, loadErr := reg.load()
	c.mu.Lock()
	c.log, c.reg = log, reg
	c.alerts.log = log
	if corrupt != nil {
		c.adopt = true
		c.loadErr = corrupt.Error()
	}
	if loadErr != nil {
		c.loadErr = loadErr.Error()
	}
	c.mu.Unlock()
	if loadErr != nil {
		log.Error("cannot read the conflict registry; starting from a scan of the hive", "registry", reg.path, "err", loadErr)
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.alerts.run(ctx) })

	c.scan(ctx, "", deviceLookupTimeout)
	c.markReady()

	if c.opts.Syncthing == nil {
		if c.opts.SyncthingOff != "" {
			log.Info("not watching syncthing; conflict copies are found by scanning the hive", "reason", c.opts.SyncthingOff)
		}
		<-ctx.Done()
		return nil
	}
	wo := c.opts.Watcher
	if wo.Logger == nil {
		wo.Logger = h.Logger()
	}
	w := syncthing.NewWatcher(c.opts.Syncthing, c.handleEvent, wo)
	c.mu.Lock()
	c.watcher = w
	c.mu.Unlock()
	return w.Run(ctx)
}

func (c *Component) markReady() { c.readyOnce.Do(func() { close(c.ready) }) }

// Routes implements daemon.Router: GET /conflicts[?wing=ID] answers a List.
//
// The answer reflects the hive at the time of the request, whether or not
// Syncthing's events are followed: the wing's agent directories (the whole
// hive without a wing) are walked first and the registry reconciled with
// what is there, so a copy made a moment ago is listed (and alerted, once,
// as any new conflict) and a deleted one is resolved. A wing that is
// neither a wing of the palace nor an agent directory of the hive is
// refused with 404 and code unknown_wing, naming the known wings.
//
// POST /conflicts/merge takes a MergeRequest and answers a MergeReport
// (see MergeCopies): the copies are those GET /conflicts lists for the
// wing, limited to the request's paths; a path that matches none is
// refused with 404 and code no_copy.
func (c *Component) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /conflicts", c.handleList)
	mux.HandleFunc("POST /conflicts/merge", c.handleMerge)
}

// codeNoCopy is the wire code of a merge request naming a path with no
// open conflict copy.
const codeNoCopy = "no_copy"

func (c *Component) handleMerge(w http.ResponseWriter, r *http.Request) {
	var req MergeRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "merge request: " + err.Error(), "code": "bad_request"})
		return
	}
	if req.Wing != "" {
		nw, err := palace.NormalizeWingID(req.Wing)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "wing: " + err.Error(), "code": "bad_request"})
			return
		}
		req.Wing = nw
	}
	select {
	case <-c.ready:
	case <-r.Context().Done():
		return
	}
	if req.Wing != "" {
		if err := c.checkWing(req.Wing); err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error(), "code": codeUnknownWing})
			return
		}
	}
	c.scan(r.Context(), req.Wing, requestLookupTimeout)
	sel, err := Select(c.List().Wing(req.Wing), req.Paths)
	if err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error(), "code": codeNoCopy})
		return
	}
	writeJSON(w, http.StatusOK, c.merge(r.Context(), sel, req.Apply, req.AcceptConflicts))
}

// merge merges the copies with the daemon's palace for bases, and, when
// something was applied, reconciles the registry with the disk at once.
func (c *Component) merge(ctx context.Context, sel []Conflict, apply, accept bool) MergeReport {
	c.mu.Lock()
	h := c.host
	c.mu.Unlock()
	var p *palace.Palace
	dir := ""
	if h != nil {
		if p = h.Palace(); p != nil {
			dir = p.Dir()
		}
	}
	rep := MergeCopies(ctx, p, sel, MergeOptions{Apply: apply, AcceptConflicts: accept, PalaceDir: dir, MaxFileBytes: c.opts.MaxFileBytes})
	if apply {
		c.scan(ctx, "", requestLookupTimeout)
	}
	return rep
}

func (c *Component) handleList(w http.ResponseWriter, r *http.Request) {
	wing := r.URL.Query().Get("wing")
	if wing != "" {
		nw, err := palace.NormalizeWingID(wing)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "wing: " + err.Error(), "code": "bad_request"})
			return
		}
		wing = nw
	}
	select {
	case <-c.ready:
	case <-r.Context().Done():
		return
	}
	if wing != "" {
		if err := c.checkWing(wing); err != nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error(), "code": codeUnknownWing})
			return
		}
	}
	scanErr := c.scan(r.Context(), wing, requestLookupTimeout)
	if r.Context().Err() != nil {
		return
	}
	l := c.List().Wing(wing)
	if scanErr != nil {
		l.ScanError = scanErr.Error()
	}
	writeJSON(w, http.StatusOK, l)
}

// checkWing returns an error matching palace.ErrUnknownWing when wing is
// neither a wing of the palace, nor an agent directory of the hive, nor
// the wing of an open conflict.
func (c *Component) checkWing(wing string) error {
	c.mu.Lock()
	h, reg := c.host, c.reg
	c.mu.Unlock()
	if h == nil || reg == nil {
		return nil // Run failed early; the list is empty anyway
	}
	p := h.Palace()
	if p != nil && p.HasWing(wing) {
		return nil
	}
	known, err := reg.hive.Wings()
	if err != nil {
		return nil // cannot tell; the scan reports the error
	}
	if slices.Contains(known, wing) {
		return nil
	}
	for _, cf := range reg.list() {
		if cf.Wing == wing {
			return nil
		}
	}
	if p != nil {
		for _, wi := range p.Wings() {
			known = append(known, wi.ID)
		}
	}
	return UnknownWingError(wing, known)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// List returns the open conflicts, sorted by wing and path.
func (c *Component) List() List {
	c.mu.Lock()
	reg := c.reg
	c.mu.Unlock()
	if reg == nil {
		return List{Conflicts: []Conflict{}}
	}
	return List{Conflicts: reg.list()}
}

// Scanned implements daemon.Scanner: after every hive scan of the daemon
// the hive is walked for conflict copies.
func (c *Component) Scanned(ctx context.Context, _ *daemon.Host) {
	select {
	case <-c.ready:
	case <-ctx.Done():
		return
	}
	c.scan(ctx, "", deviceLookupTimeout)
}

// ConflictsOpen implements daemon.ConflictCounter. Once the registry is
// loaded, the hive is walked first, so status and metrics count what is on
// disk now, as GET /conflicts lists it.
func (c *Component) ConflictsOpen(ctx context.Context) int {
	c.mu.Lock()
	reg := c.reg
	c.mu.Unlock()
	if reg == nil {
		return 0
	}
	select {
	case <-c.ready:
		ctx, cancel := context.WithTimeout(ctx, countTimeout)
		c.scan(ctx, "", requestLookupTimeout)
		cancel()
	default:
	}
	return reg.count()
}

// scan walks the hive (only wing's agent directories when wing is set) and
// reconciles the registry with what is on disk: new copies are recorded
// and alerted, registered copies gone from disk resolved. Scans may run
// at once (a tick, requests); reconcile checks the disk again, so a walk
// that a concurrent change overtook does not undo it. It returns why the
// walk was incomplete, if it was.
func (c *Component) scan(ctx context.Context, wing string, lookupTimeout time.Duration) error {
	c.mu.Lock()
	reg, log, adopt := c.reg, c.log, c.adopt
	c.mu.Unlock()
	if reg == nil {
		return nil // Run failed before loading the registry
	}
	copies, err := scanHive(ctx, reg.hive, wing)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	now := detectedTime(time.Now())
	c.lookupNames(ctx, reg, copies, lookupTimeout)
	onDisk := make([]Conflict, len(copies))
	for i, f := range copies {
		onDisk[i] = f.c
		onDisk[i].Detected = now
		onDisk[i].FoundBy = FoundByScan
	}
	added, resolved, saveErr := reg.reconcile(onDisk)
	if saveErr == nil && reg.lastSaveError() != "" {
		saveErr = reg.save() // an earlier change is still unsaved
	}

	msg := ""
	if err != nil {
		msg = err.Error()
	}
	c.mu.Lock()
	changed := false
	if wing == "" {
		// Status tells of walks of the whole hive.
		c.lastScan = time.Now()
		changed = msg != c.scanErr
		c.scanErr = msg
	}
	loadErr := c.loadErr
	if adopt {
		c.adopt = false
		if saveErr == nil {
			c.loadErr = "" // rebuilt and saved
		}
	}
	c.mu.Unlock()
	if changed && msg != "" {
		log.Warn("scan for conflict copies incomplete; retrying at every scan", "hive", reg.hive.Dir(), "err", err)
	}
	c.noteSave(saveErr)
	for _, r := range resolved {
		log.Info("conflict resolved: the copy is gone", "path", r.Path, "wing", r.Wing)
	}
	if adopt {
		log.Warn("conflict registry was unreadable; rebuilt it from a scan of the hive (its conflicts are not alerted again; see memminer conflicts)",
			"registry", reg.path, "moved_to", reg.path+".corrupt", "open", reg.count(), "err", loadErr)
		return err
	}
	for _, a := range added {
		c.alert(a)
	}
	return err
}

// lookupNames asks Syncthing for device names the registry does not know
// yet, once per scan and only when a copy needs one, waiting at most
// timeout.
func (c *Component) lookupNames(ctx context.Context, reg *registry, copies []found, timeout time.Duration) {
	if c.opts.Syncthing == nil {
		return
	}
	need := map[string]bool{}
	for _, f := range copies {
		if f.c.Device != "" && !reg.has(f.c.Path) && reg.name(f.c.Device) == "" {
			need[f.c.Device] = true
		}
	}
	if len(need) == 0 {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	devices, err := c.opts.Syncthing.Devices(lctx)
	if err != nil {
		return // the watcher reports Syncthing's state; names stay unknown
	}
	for short := range need {
		if d, ok := syncthing.DeviceByShort(devices, short); ok {
			reg.learn(short, d.Name)
		}
	}
}

// handleEvent takes a conflict event from the Syncthing watcher.
func (c *Component) handleEvent(_ context.Context, ev syncthing.ConflictEvent) {
	c.mu.Lock()
	reg, log := c.reg, c.log
	c.mu.Unlock()
	rel, ok := reg.hive.Rel(ev.Path)
	if !ok {
		log.Debug("conflict copy outside the hive; ignored", "path", ev.Path, "folder", ev.FolderID)
		return
	}
	path := filepath.Join(reg.hive.Dir(), rel)
	if ev.Action == syncthing.ActionDeleted {
		r, ok, err := reg.resolve(path)
		c.noteSave(err)
		if ok {
			log.Info("conflict resolved: the copy is gone", "path", r.Path, "wing", r.Wing)
		}
		return
	}
	name := ""
	if ev.WinnerKnown {
		name = ev.Winner.Name
	}
	cf := Conflict{
		Path:       path,
		Original:   filepath.Join(filepath.Dir(path), ev.Name.Original),
		Wing:       wingOf(reg.hive, path),
		Detected:   detectedTime(time.Now()),
		Device:     ev.Name.ShortDevice,
		DeviceName: name,
		FoundBy:    FoundByEvent,
	}
	added, err := reg.add(cf)
	c.noteSave(err)
	if added {
		if cf.DeviceName == "" {
			cf.DeviceName = reg.name(cf.Device)
		}
		c.alert(cf)
	}
}

// alert logs a new conflict and queues its command and webhook; with
// AutoMerge it first merges the copy when that is clean, and then alerts
// it as merged.
func (c *Component) alert(cf Conflict) {
	c.mu.Lock()
	log := c.log
	c.mu.Unlock()
	cf.Action = ActionOpen
	switch m, outcome := c.autoMerge(cf); outcome {
	case autoMerged:
		cf.Action = ActionMerged
		log.Warn("syncthing conflict merged: the copy merged cleanly into the original and was removed; the replaced contents are kept",
			"wing", cf.Wing, "path", cf.Path, "original", cf.Original, "device", cf.Device, "device_name", cf.DeviceName,
			"from_copy", len(m.FromCopy), "removed", len(m.Removed), "kept_in", m.Backup)
		c.alerts.enqueue(cf)
		return
	case autoMergeElsewhere:
		c.alertUnlessMerged(cf)
		return
	}
	c.alertOpen(cf)
}

// alertOpen logs and queues the alert of an open conflict.
func (c *Component) alertOpen(cf Conflict) {
	c.mu.Lock()
	log := c.log
	c.mu.Unlock()
	log.Warn("syncthing conflict: a memory file has a conflict copy; merge it with memminer conflicts merge, or by hand and delete the copy",
		"wing", cf.Wing, "path", cf.Path, "original", cf.Original, "device", cf.Device, "device_name", cf.DeviceName, "found_by", cf.FoundBy)
	c.alerts.enqueue(cf)
}

// alertUnlessMerged waits, in the background, for the device the copy
// names to merge it (its removal reaches this device through Syncthing),
// and alerts the conflict as open only if the copy is still there after
// Options.AutoMergeWait.
func (c *Component) alertUnlessMerged(cf Conflict) {
	c.mu.Lock()
	ctx, log := c.runCtx, c.log
	c.mu.Unlock()
	if ctx == nil {
		c.alertOpen(cf)
		return
	}
	wait := c.opts.AutoMergeWait
	if wait <= 0 {
		wait = DefaultAutoMergeWait
	}
	log.Info("conflict copy names another device; waiting for its merge before alerting", "path", cf.Path, "device", cf.Device, "wait", wait)
	c.bg.Go(func() {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := os.Lstat(cf.Path); err != nil {
			log.Info("conflict copy merged by the device it names", "path", cf.Path, "device", cf.Device)
			return
		}
		c.alertOpen(cf)
	})
}

// What autoMerge did.
type autoMergeOutcome int

const (
	autoMergeNot       autoMergeOutcome = iota // not merged: alert as open
	autoMerged                                 // merged and resolved
	autoMergeElsewhere                         // left to the device the copy names
)

// DefaultAutoMergeWait is how long a device waits for the device named in
// a conflict copy to merge it before alerting it as open.
const DefaultAutoMergeWait = 30 * time.Second

// autoMerge merges cf when AutoMerge is on, this device is the one to
// merge it, and the merge is clean (the copy is then resolved in the
// registry).
func (c *Component) autoMerge(cf Conflict) (CopyMerge, autoMergeOutcome) {
	if !c.opts.AutoMerge || !hive.IsMemoryFile(cf.Original) || cf.Wing == "" {
		return CopyMerge{}, autoMergeNot
	}
	c.mu.Lock()
	h, reg, log := c.host, c.reg, c.log
	c.mu.Unlock()
	if h == nil || reg == nil {
		return CopyMerge{}, autoMergeNot
	}
	ctx, cancel := context.WithTimeout(context.Background(), autoMergeTimeout)
	defer cancel()
	if c.opts.Syncthing != nil {
		// Only the device the copy names merges it: a second device
		// writing the same merge at the same time would make a new
		// conflict.
		st, err := c.opts.Syncthing.SystemStatus(ctx)
		if err != nil {
			log.Info("not merging the conflict copy automatically: cannot ask Syncthing which device this is", "path", cf.Path, "err", err)
			return CopyMerge{}, autoMergeNot
		}
		if cf.Device != "" && st.MyID.Short() != cf.Device {
			return CopyMerge{}, autoMergeElsewhere
		}
	}
	p := h.Palace()
	dir := ""
	if p != nil {
		dir = p.Dir()
	}
	rep := MergeCopies(ctx, p, []Conflict{cf}, MergeOptions{Apply: true, PalaceDir: dir, MaxFileBytes: c.opts.MaxFileBytes})
	m := rep.Merges[0]
	if !m.Applied {
		if m.Status != StatusNeedsReview {
			log.Warn("automatic merge of the conflict copy failed; left for a person", "path", cf.Path, "err", m.Error)
		}
		return m, autoMergeNot
	}
	if _, _, err := reg.resolve(cf.Path); err != nil {
		c.noteSave(err)
	}
	return m, autoMerged
}

// autoMergeTimeout bounds one automatic merge.
const autoMergeTimeout = 30 * time.Second

// noteSave logs a failed registry save once per failing streak.
func (c *Component) noteSave(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.saveFailing = false
		return
	}
	if c.saveFailing {
		return
	}
	c.saveFailing = true
	c.log.Error("cannot save the conflict registry; retrying at every change and scan (a restart before it works may alert again)", "err", err)
}

// Status is the component's part of `memminer status --json`, under
// daemon.components.conflicts.
type Status struct {
	// Open is the number of open conflicts.
	Open int `json:"open"`
	// Registry is the registry file.
	Registry string `json:"registry"`
	// RegistryError is the last failure to read or save it.
	RegistryError string `json:"registry_error,omitempty"`
	// LastScan is when the hive was last walked.
	LastScan time.Time `json:"last_scan"`
	// ScanError is why the last walk was incomplete.
	ScanError string `json:"scan_error,omitempty"`
	// Syncthing is the state of the event stream.
	Syncthing SyncthingStatus `json:"syncthing"`
	// Alerts counts deliveries of commands and webhooks.
	Alerts AlertStatus `json:"alerts"`
}

// SyncthingStatus is the state of the Syncthing event stream.
type SyncthingStatus struct {
	// Enabled reports whether a Syncthing is watched.
	Enabled bool `json:"enabled"`
	// Reason says why not, when not enabled.
	Reason string `json:"reason,omitempty"`
	// URL is Syncthing's address.
	URL string `json:"url,omitempty"`
	// Connected reports whether the last request to Syncthing worked.
	Connected bool `json:"connected"`
	// LastError is Syncthing's last failure (never holds the API key).
	LastError string `json:"last_error,omitempty"`
	// LastErrorTime is when it happened.
	LastErrorTime *time.Time `json:"last_error_time,omitempty"`
	// Restarts counts Syncthing restarts noticed.
	Restarts int `json:"restarts"`
	// Events counts conflict events received.
	Events int `json:"events"`
}

// AlertStatus counts alert deliveries (command and webhook, per conflict).
type AlertStatus struct {
	// Command reports whether an --on-conflict command is set.
	Command bool `json:"command"`
	// Webhook is the webhook's scheme and host, if one is set.
	Webhook string `json:"webhook,omitempty"`
	// Sent and Failed count conflicts whose alerts went out, or failed.
	Sent   int `json:"sent"`
	Failed int `json:"failed"`
	// Pending counts conflicts whose alerts wait for delivery.
	Pending int `json:"pending"`
	// LastError is the last delivery failure.
	LastError string `json:"last_error,omitempty"`
}

// Status implements daemon.StatusReporter.
func (c *Component) Status() any { return c.Snapshot() }

// Snapshot returns the component's state.
func (c *Component) Snapshot() Status {
	c.mu.Lock()
	st := Status{LastScan: c.lastScan, ScanError: c.scanErr, RegistryError: c.loadErr}
	reg, w := c.reg, c.watcher
	c.mu.Unlock()
	if reg != nil {
		st.Open = reg.count()
		st.Registry = reg.path
		if e := reg.lastSaveError(); e != "" {
			st.RegistryError = e
		}
	}
	if c.opts.Syncthing == nil {
		st.Syncthing.Reason = c.opts.SyncthingOff
		if st.Syncthing.Reason == "" {
			st.Syncthing.Reason = "no Syncthing configured"
		}
	} else {
		st.Syncthing.Enabled = true
		st.Syncthing.URL = c.opts.Syncthing.BaseURL()
	}
	if w != nil {
		ws := w.Status()
		st.Syncthing.Connected = ws.Connected
		st.Syncthing.Restarts = ws.Restarts
		st.Syncthing.Events = ws.Delivered
		if ws.LastError != nil {
			st.Syncthing.LastError = ws.LastError.Error()
			t := ws.LastErrorTime.UTC()
			st.Syncthing.LastErrorTime = &t
		}
	}
	sent, failed, pending, lastErr := c.alerts.stats()
	st.Alerts = AlertStatus{Command: len(c.opts.Command) > 0, Sent: sent, Failed: failed, Pending: pending, LastError: lastErr}
	if c.opts.Webhook != "" {
		st.Alerts.Webhook = redactURL(c.opts.Webhook)
	}
	return st
}

// String describes the component for logs without secrets.
func (c *Component) String() string {
	return fmt.Sprintf("conflicts{syncthing: %t, command: %t, webhook: %t}", c.opts.Syncthing != nil, len(c.opts.Command) > 0, c.opts.Webhook != "")
}
