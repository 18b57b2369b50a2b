package connect

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/memminer/memminer/clients/skill"
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/udiff"
)

// Errors callers tell apart.
var (
	// ErrUnknownAgent means no entry of Agents has the id.
	ErrUnknownAgent = errors.New("unknown agent")
	// ErrNotConnected means Disconnect found no record of a connection.
	ErrNotConnected = errors.New("not connected")
	// ErrUnparsable is matched by a *FormatError.
	ErrUnparsable = errors.New("cannot parse")
	// ErrTaken is matched by a *TakenError.
	ErrTaken = errors.New("already taken")
)

// FormatError is a file connect cannot parse (or whose edit would break
// it): nothing was written.
type FormatError struct {
	Path   string
	Format string
	Err    error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s: not %s connect can edit: %v", e.Path, e.Format, e.Err)
}

// Is makes a *FormatError match ErrUnparsable.
func (e *FormatError) Is(target error) bool { return target == ErrUnparsable }

func (e *FormatError) Unwrap() error { return e.Err }

// TakenError is a key connect would set that holds someone else's value
// (an MCP server named memminer that is not `memminer mcp`).
type TakenError struct {
	Path string
	Key  string
}

func (e *TakenError) Error() string {
	return fmt.Sprintf("%s: %s is already set, and not by memminer connect; remove it or rename it", e.Path, e.Key)
}

// Is makes a *TakenError match ErrTaken.
func (e *TakenError) Is(target error) bool { return target == ErrTaken }

// edit is how connect changes one file format.
type edit interface {
	// apply returns cur with memminer's entries in place of any earlier
	// ones connect wrote; cur is empty when the file does not exist. orig
	// is the file before the first connect: an entry it had is the
	// user's, however much it looks like memminer's.
	apply(cur, orig []byte) ([]byte, error)
	// remove returns cur without memminer's entries, keeping whatever orig
	// (the file before the first connect) had.
	remove(cur, orig []byte) ([]byte, error)
	// empty reports whether a file connect created holds nothing else.
	empty(b []byte) bool
	format() string
}

// Actions on a file, as Result reports them.
const (
	Created   = "created"
	Changed   = "changed"
	Unchanged = "unchanged"
	Restored  = "restored" // disconnect put the backup back
	Cleaned   = "cleaned"  // disconnect removed memminer's entries from a file changed since
	Deleted   = "deleted"  // disconnect deleted a file connect created
	Missing   = "missing"  // disconnect found the file gone
)

// FileResult is what connect did (or would do) to one file.
type FileResult struct {
	Path   string `json:"path"`
	Role   string `json:"role"`
	Action string `json:"action"`
	// Diff is the unified diff of the change (what --dry-run prints).
	Diff string `json:"-"`
}

// Result says what Connect or Disconnect did.
type Result struct {
	Agent  string       `json:"agent"`
	Wing   string       `json:"wing"`
	Scope  string       `json:"scope"`
	DryRun bool         `json:"dry_run"`
	Files  []FileResult `json:"files"`
	// Note is the agent's Note, on connecting.
	Note string `json:"note,omitempty"`
	// Skills says what was done in the client's skills folder, when
	// anything was.
	Skills *skill.Installed `json:"skills,omitempty"`
	// Memory is what connecting did with the memory the client keeps of
	// its own (Agent.OwnMemory); nil when nothing.
	Memory *MemoryResult `json:"memory,omitempty"`
}

// Options configure Connect and Disconnect.
type Options struct {
	Scope Scope
	// Wing is the agent's wing (recorded for status).
	Wing string
	// Install is what the hooks and the MCP server run.
	Install Install
	// StateDir keeps each connection's record and backups (StateDir()).
	StateDir string
	// Hive is the hive, absolute, whose published skills Connect installs
	// into the client's skills folder (package skill) and Disconnect
	// removes; empty, Connect installs none and Disconnect removes the
	// skills of whatever hive the connection recorded, else of any.
	Hive string
	// DryRun computes every change and writes nothing.
	DryRun bool
	// Now stamps the record; nil means time.Now.
	Now func() time.Time
}

// install is opts.Install with the hive, for the files' edits.
func (opts Options) install() Install {
	in := opts.Install
	in.hive = opts.Hive
	return in
}

// StateDir is where connections are recorded: $XDG_STATE_HOME/memminer/
// connect, by default ~/.local/state/memminer/connect.
func StateDir(getenv func(string) string, home string) string {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "memminer", "connect")
	}
	return filepath.Join(home, ".local", "state", "memminer", "connect")
}

// Connection is the record of one agent connected in one scope.
type Connection struct {
	Agent string `json:"agent"`
	Wing  string `json:"wing"`
	// Scope is "user" or the project directory.
	Scope       string    `json:"scope"`
	ConnectedAt time.Time `json:"connected_at"`
	// Flags are the flags the installed commands carry (Install.Flags),
	// so doctor can check what they reach.
	Flags []string    `json:"flags,omitempty"`
	Files []fileState `json:"files"`
	// Hive is the hive whose published skills were installed into the
	// client's skills folder Skills; both empty when none were.
	Hive   string `json:"hive,omitempty"`
	Skills string `json:"skills,omitempty"`
	dir    string
}

type fileState struct {
	Path string `json:"path"`
	Role string `json:"role"`
	// Existed says whether the file was there before the first connect;
	// its content then is in Backup, a file of the record's directory.
	Existed bool   `json:"existed"`
	Backup  string `json:"backup,omitempty"`
	Mode    uint32 `json:"mode,omitempty"`
	// After is the SHA-256 of the file as connect last wrote it: a file
	// still so, and never Edited, is restored from its backup byte for
	// byte.
	After string `json:"after"`
	// Edited says that a connect found the file changed since connect
	// last wrote it: the backup is then older than what the user (or the
	// client) wrote, and disconnect only removes memminer's entries.
	Edited bool `json:"edited,omitempty"`
	// Dirs are directories connect created for it, deepest first.
	Dirs []string `json:"dirs,omitempty"`
}

// Connect installs memminer for agent in opts.Scope. Every file is read
// and edited first; if one cannot be, nothing is written. Connecting again
// changes nothing unless the settings changed.
func Connect(agentID string, opts Options) (Result, error) {
	ag, ok := Lookup(agentID)
	if !ok {
		return Result{}, fmt.Errorf("%w %q (want one of: %s)", ErrUnknownAgent, agentID, strings.Join(AgentIDs(), ", "))
	}
	res := Result{Agent: ag.ID, Wing: opts.Wing, Scope: opts.Scope.Name(), DryRun: opts.DryRun, Note: ag.Note}
	unlock, err := lock(opts)
	if err != nil {
		return res, err
	}
	defer unlock()
	dir := connectionDir(opts.StateDir, ag.ID, opts.Scope)
	rec, _ := readRecord(dir)
	var plans []filePlan
	for _, f := range ag.files(opts.Scope, opts.install()) {
		p, fr, err := planFile(ag, f, rec)
		if err != nil {
			return res, err
		}
		res.Files = append(res.Files, fr)
		plans = append(plans, p)
	}
	mem, err := ag.planMemory(opts, plans, &res)
	if err != nil {
		return res, err
	}
	if opts.DryRun {
		return res, nil
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	if rec.Agent == "" {
		rec = Connection{Agent: ag.ID, Scope: opts.Scope.Name(), ConnectedAt: now().UTC()}
	}
	rec.Wing, rec.Flags = opts.Wing, opts.Install.Flags
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return res, fmt.Errorf("connect: keep backups: %w", err)
	}
	// Backups first: a file is changed only once its original is safe.
	for i, p := range plans {
		if rec.index(p.f.path) >= 0 {
			continue
		}
		st := fileState{Path: p.f.path, Role: p.f.role, Existed: p.existed, Mode: uint32(p.mode)}
		if p.existed {
			st.Backup = strconv.Itoa(len(rec.Files)) + "-" + filepath.Base(p.f.path) + ".orig"
			if err := atomicfile.Write(filepath.Join(dir, st.Backup), p.cur, 0o600); err != nil {
				return res, fmt.Errorf("connect: back up %s: %w", p.f.path, err)
			}
		} else {
			st.Dirs = missingDirs(filepath.Dir(p.path))
		}
		st.After = sum(plans[i].cur)
		rec.Files = append(rec.Files, st)
	}
	if err := writeRecord(dir, rec); err != nil {
		return res, err
	}
	// The client's memory is copied into the hive before its settings
	// point there.
	if err := mem.run(); err != nil {
		return res, fmt.Errorf("connect %s: %w", ag.Name, err)
	}
	for _, p := range plans {
		i := rec.index(p.f.path)
		if sum(p.cur) != rec.Files[i].After {
			rec.Files[i].Edited = true
		}
		if !bytes.Equal(p.new, p.cur) || !p.existed {
			if err := os.MkdirAll(filepath.Dir(p.path), 0o755); err != nil {
				return res, fmt.Errorf("connect: %w", err)
			}
			if err := atomicfile.Write(p.path, p.new, p.mode); err != nil {
				return res, fmt.Errorf("connect: write %s: %w", p.f.path, err)
			}
		}
		rec.Files[i].After = sum(p.new)
	}
	if err := installSkills(&rec, ag.SkillsDir(opts.Scope), opts.Hive, &res); err != nil {
		return res, err
	}
	return res, writeRecord(dir, rec)
}

// installSkills installs hive's published skills into the client's skills
// folder dir and records it in rec; the copies of another hive recorded
// before are removed first. Nothing is done without a hive or a folder.
func installSkills(rec *Connection, dir, hive string, res *Result) error {
	if dir == "" || hive == "" {
		return nil
	}
	if rec.Skills != "" && (rec.Hive != hive || rec.Skills != dir) {
		if _, err := skill.Remove(rec.Skills, rec.Hive); err != nil {
			return fmt.Errorf("connect: skills in %s: %w", rec.Skills, err)
		}
	}
	rec.Hive, rec.Skills = hive, dir
	did, err := skill.Install(dir, hive)
	if err != nil {
		return fmt.Errorf("connect: skills in %s: %w", dir, err)
	}
	res.Skills = did.OrNil()
	return nil
}

// filePlan is how connecting changes one file.
type filePlan struct {
	f        file
	path     string // symlinks resolved
	cur, new []byte
	existed  bool
	mode     fs.FileMode
}

// planFile reads f, a file of ag, and edits it in memory; rec is the
// connection's record so far (the file's backup is what it held before
// the first connect).
func planFile(ag Agent, f file, rec Connection) (filePlan, FileResult, error) {
	p := filePlan{f: f, path: resolve(f.path), mode: 0o644}
	cur, err := os.ReadFile(p.path)
	switch {
	case err == nil:
		p.existed = true
		if st, err := os.Stat(p.path); err == nil {
			p.mode = st.Mode().Perm()
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return p, FileResult{}, fmt.Errorf("connect %s: %w", ag.Name, err)
	}
	p.cur = cur
	orig := cur
	if i := rec.index(f.path); i >= 0 {
		if orig, err = rec.backup(i); err != nil {
			return p, FileResult{}, fmt.Errorf("connect %s: %w", ag.Name, err)
		}
	}
	if p.new, err = f.edit.apply(cur, orig); err != nil {
		return p, FileResult{}, withPath(err, f.path)
	}
	action := Changed
	switch {
	case bytes.Equal(p.new, cur) && p.existed:
		action = Unchanged
	case !p.existed:
		action = Created
	}
	return p, FileResult{Path: f.path, Role: f.role, Action: action, Diff: diff(f.path, p.existed, cur, p.new)}, nil
}

// Disconnect removes what Connect installed for agent in opts.Scope: a
// file unchanged since is restored from its backup byte for byte (or
// deleted, when connect created it); a file changed since loses only
// memminer's entries. The record and backups go last.
func Disconnect(agentID string, opts Options) (Result, error) {
	ag, ok := Lookup(agentID)
	if !ok {
		return Result{}, fmt.Errorf("%w %q (want one of: %s)", ErrUnknownAgent, agentID, strings.Join(AgentIDs(), ", "))
	}
	res := Result{Agent: ag.ID, Scope: opts.Scope.Name(), DryRun: opts.DryRun}
	unlock, err := lock(opts)
	if err != nil {
		return res, err
	}
	defer unlock()
	dir := connectionDir(opts.StateDir, ag.ID, opts.Scope)
	rec, err := readRecord(dir)
	if err != nil {
		return res, fmt.Errorf("%s in %s: %w", ag.Name, opts.Scope.Name(), ErrNotConnected)
	}
	res.Wing = rec.Wing
	edits := map[string]edit{}
	for _, f := range ag.files(opts.Scope, opts.install()) {
		edits[f.path] = f.edit
	}
	type plan struct {
		st     fileState
		path   string
		new    []byte
		delete bool
		skip   bool
		mode   fs.FileMode
	}
	var plans []plan
	for i, st := range rec.Files {
		p := plan{st: st, path: resolve(st.Path), mode: fs.FileMode(st.Mode)}
		if p.mode == 0 {
			p.mode = 0o644
		}
		cur, err := os.ReadFile(p.path)
		if errors.Is(err, fs.ErrNotExist) {
			p.skip = true
			res.Files = append(res.Files, FileResult{Path: st.Path, Role: st.Role, Action: Missing})
			plans = append(plans, p)
			continue
		}
		if err != nil {
			return res, fmt.Errorf("disconnect %s: %w", ag.Name, err)
		}
		orig, err := rec.backup(i)
		if err != nil {
			return res, fmt.Errorf("disconnect %s: %w", ag.Name, err)
		}
		action := Restored
		switch {
		case sum(cur) == st.After && !st.Edited && st.Existed:
			p.new = orig
		case sum(cur) == st.After && !st.Edited:
			p.delete, action = true, Deleted
		default:
			e := edits[st.Path]
			if e == nil {
				return res, fmt.Errorf("disconnect %s: %s is not one of its files", ag.Name, st.Path)
			}
			if p.new, err = e.remove(cur, orig); err != nil {
				return res, withPath(err, st.Path)
			}
			action = Cleaned
			if !st.Existed && e.empty(p.new) {
				p.delete, action = true, Deleted
			}
		}
		to := p.new
		if p.delete {
			to = nil
		}
		res.Files = append(res.Files, FileResult{Path: st.Path, Role: st.Role, Action: action, Diff: diff(st.Path, true, cur, to)})
		plans = append(plans, p)
	}
	if opts.DryRun {
		return res, nil
	}
	for _, p := range plans {
		switch {
		case p.skip:
		case p.delete:
			if err := os.Remove(p.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return res, fmt.Errorf("disconnect: %w", err)
			}
			for _, d := range p.st.Dirs {
				os.Remove(d) // only when empty
			}
		default:
			if err := atomicfile.Write(p.path, p.new, p.mode); err != nil {
				return res, fmt.Errorf("disconnect: write %s: %w", p.st.Path, err)
			}
		}
	}
	if err := removeSkills(rec, ag.SkillsDir(opts.Scope), opts.Hive, &res); err != nil {
		return res, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return res, fmt.Errorf("disconnect: remove the record: %w", err)
	}
	return res, nil
}

// removeSkills removes from the client's skills folder the skills
// installed there: those of the folder and hive rec names, else (a record
// from before connect recorded them) of dir and hive, any hive's when
// hive is empty.
func removeSkills(rec Connection, dir, hive string, res *Result) error {
	if rec.Skills != "" {
		dir, hive = rec.Skills, rec.Hive
	}
	if dir == "" {
		return nil
	}
	did, err := skill.Remove(dir, hive)
	if err != nil {
		return fmt.Errorf("disconnect: skills in %s: %w", dir, err)
	}
	res.Skills = did.OrNil()
	return nil
}

// SyncSkills brings in step with hive's published skills the skills
// folder of every connection recorded in stateDir that installed them
// (Connect with Options.Hive): what connect run again would do to them,
// under the same lock of home. It is how the daemon keeps the clients in
// step as skills are published and deprecated. It returns what it did in
// each folder.
func SyncSkills(stateDir, home, hive string) ([]skill.Installed, error) {
	unlock, err := lock(Options{Scope: Scope{Home: home}})
	if err != nil {
		return nil, err
	}
	defer unlock()
	conns, err := Connections(stateDir)
	if err != nil {
		return nil, err
	}
	hiveInfo, err := os.Stat(hive)
	if err != nil {
		return nil, err
	}
	var out []skill.Installed
	var errs []error
	for _, c := range conns {
		if c.Skills == "" || c.Hive == "" {
			continue
		}
		// The hive as connect named it, which its copies' markers hold:
		// the daemon may name the same directory another way.
		if info, err := os.Stat(c.Hive); err != nil || !os.SameFile(info, hiveInfo) {
			continue
		}
		did, err := skill.Install(c.Skills, c.Hive)
		if err != nil {
			errs = append(errs, fmt.Errorf("skills of %s in %s: %w", c.Agent, c.Skills, err))
			continue
		}
		out = append(out, did)
	}
	return out, errors.Join(errs...)
}

// Connections lists the recorded connections in stateDir, by agent and
// scope.
func Connections(stateDir string) ([]Connection, error) {
	entries, err := os.ReadDir(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Connection
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if rec, err := readRecord(filepath.Join(stateDir, e.Name())); err == nil {
			out = append(out, rec)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Agent != out[j].Agent {
			return out[i].Agent < out[j].Agent
		}
		return out[i].Scope < out[j].Scope
	})
	return out, nil
}

// Paths are the connection's files.
func (c Connection) Paths() []string {
	out := make([]string, len(c.Files))
	for i, f := range c.Files {
		out[i] = f.Path
	}
	return out
}

// backup is the content of the connection's i-th file before the first
// connect: nil when connect created it.
func (c Connection) backup(i int) ([]byte, error) {
	st := c.Files[i]
	if !st.Existed {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(c.dir, st.Backup))
	if err != nil {
		return nil, fmt.Errorf("read the backup of %s: %w", st.Path, err)
	}
	return b, nil
}

// lock takes the connect lock of the user: an advisory lock on the home
// directory itself (no lock file, so a dry run or a refused connect
// writes nothing), which every Connect and Disconnect holds while it
// reads and writes the clients' files and the records. Two at once would
// each back up, edit and record a file the other is changing, and
// disconnect would undo half of it. It waits for the lock.
func lock(opts Options) (unlock func(), err error) {
	if opts.Scope.Home == "" {
		return nil, errors.New("connect: no home directory to lock")
	}
	l := flock.New(opts.Scope.Home, flock.SetFlag(os.O_RDONLY))
	if err := l.Lock(); err != nil {
		return nil, fmt.Errorf("connect: lock %s: %w", opts.Scope.Home, err)
	}
	return func() { _ = l.Unlock() }, nil
}

func (c Connection) index(path string) int {
	for i, f := range c.Files {
		if f.Path == path {
			return i
		}
	}
	return -1
}

const recordName = "connection.json"

func connectionDir(stateDir, agent string, s Scope) string {
	h := sha256.Sum256([]byte(s.Name()))
	return filepath.Join(stateDir, agent+"-"+hex.EncodeToString(h[:6]))
}

func readRecord(dir string) (Connection, error) {
	b, err := os.ReadFile(filepath.Join(dir, recordName))
	if err != nil {
		return Connection{}, err
	}
	var c Connection
	if err := json.Unmarshal(b, &c); err != nil {
		return Connection{}, fmt.Errorf("%s: %w", filepath.Join(dir, recordName), err)
	}
	c.dir = dir
	return c, nil
}

func writeRecord(dir string, c Connection) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, recordName), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("connect: record the connection: %w", err)
	}
	return nil
}

// resolve follows a symlinked configuration file to the file it names, so
// the link stays a link: a dangling one too, to the file it would name.
func resolve(path string) string {
	for range 40 { // as many links as the kernel follows
		if r, err := filepath.EvalSymlinks(path); err == nil {
			return r
		}
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		target, err := os.Readlink(path)
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		return filepath.Join(r, filepath.Base(path))
	}
	return path
}

// missingDirs lists dir and its ancestors that do not exist, deepest first.
func missingDirs(dir string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			return out
		}
		out = append(out, d)
	}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func withPath(err error, path string) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.Path = path
		return fe
	}
	var te *TakenError
	if errors.As(err, &te) {
		te.Path = path
		return te
	}
	return fmt.Errorf("%s: %w", path, err)
}

// diff is the unified diff of a file's change; /dev/null stands for a
// file that is not there before or after.
func diff(path string, existed bool, a, b []byte) string {
	from, to := path, path
	if !existed {
		from = "/dev/null"
	}
	if b == nil {
		to = "/dev/null"
	}
	return udiff.Diff(from, to, a, b)
}
