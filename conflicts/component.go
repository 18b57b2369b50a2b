package conflicts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

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
	// AutoMergeRetry is the wait before retrying an automatic merge that
	// failed in a passing way (DefaultAutoMergeRetry), doubled with
	// jitter up to AutoMergeMaxRetry (DefaultAutoMergeMaxRetry);
	// AutoMergeGiveUp (DefaultAutoMergeGiveUp) is how long it is retried
	// before it is left to a person.
	AutoMergeRetry, AutoMergeMaxRetry, AutoMergeGiveUp time.Duration
	// MaxFileBytes bounds the files a merge reads (config's default when 0).
	MaxFileBytes int64
}

// Host is what the component needs of the daemon that runs it (the
// daemon's Host): its palace, hive, agent globs, logger, and how often it
// found the hive changed.
type Host interface {
	// Palace is the daemon's open palace.
	Palace() *palace.Palace
	// Hive is the hive directory, absolute.
	Hive() string
	// Agents are the globs of agent directories besides agents/<id>.
	Agents() []string
	// Logger is the daemon's logger.
	Logger() *slog.Logger
	// HiveChanges counts the scans that looked at the hive afresh.
	HiveChanges() uint64
}

// Component is the conflict registry as a daemon component. Create it with
// New; the daemon runs it (daemon.Conflicts).
type Component struct {
	opts      Options
	alerts    *alerter
	ready     chan struct{} // closed once the registry is loaded and scanned
	readyOnce sync.Once
	// walked is Host.HiveChanges before the last complete walk Scanned
	// made (0: none); only Scanned's goroutine uses it.
	walked uint64

	mu       sync.Mutex // guards the fields below
	host     Host
	log      *slog.Logger
	reg      *registry
	watcher  *syncthing.Watcher
	lastScan time.Time
	scanErr  string
	loadErr  string
	// adopt is set while the registry is being rebuilt after corruption:
	// the rebuild's finds are not alerted again.
	adopt bool
	// movedTo is where the corrupt registry was moved aside ("" if not).
	movedTo string
	// saveFailing is set while saving the registry fails (logged once).
	saveFailing bool
	// runCtx is Run's context; alerts left for another device's merge
	// wait in background goroutines (bg) that end with it.
	runCtx context.Context
	bg     sync.WaitGroup
	// merging is what the automatic merge does with copies it could not
	// merge at once, by copy path.
	merging map[string]AutoMergeState
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
func (c *Component) Run(ctx context.Context, h Host) error {
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
	corrupt, movedTo, loadErr := reg.load()
	c.mu.Lock()
	c.log, c.reg = log, reg
	c.alerts.log = log
	if corrupt != nil {
		c.adopt = true
		c.loadErr = corrupt.Error()
		c.movedTo = movedTo
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
	if c.opts.AutoMerge {
		c.mergeLeftOpen(ctx)
	}

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

// List returns the open conflicts, sorted by wing and path.
func (c *Component) List() List {
	c.mu.Lock()
	reg := c.reg
	c.mu.Unlock()
	if reg == nil {
		return List{Conflicts: []Conflict{}}
	}
	return List{Conflicts: c.withMergeStates(reg.list())}
}

// Scanned implements daemon.Scanner: after every hive scan of the daemon
// the hive is walked for conflict copies, unless the daemon found nothing
// in it changed since the last complete walk (Host.HiveChanges).
func (c *Component) Scanned(ctx context.Context, h Host) {
	select {
	case <-c.ready:
	case <-ctx.Done():
		return
	}
	changes := h.HiveChanges()
	if c.walked == changes {
		return
	}
	err := c.scan(ctx, "", deviceLookupTimeout)
	c.mu.Lock()
	reg := c.reg
	c.mu.Unlock()
	if err == nil && reg != nil && reg.lastSaveError() == "" {
		c.walked = changes
	}
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
	reg, log, adopt, movedTo := c.reg, c.log, c.adopt, c.movedTo
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
			"registry", reg.path, "moved_to", movedTo, "open", reg.count(), "err", loadErr)
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
