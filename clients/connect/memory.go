package connect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/memory/secrets"
)

// ownMemory is how a client keeps a memory of its own, which connect
// brings into the hive: a setting of its hooks file that names the folder
// it writes to, and where it kept that memory before.
type ownMemory struct {
	// setting is the key of the hooks file naming the folder.
	setting string
	// projects is the folder holding one folder per project, each with
	// the project's memory in memory/.
	projects func(s Scope) string
}

// claudeMemory is Claude Code's auto memory (checked with 2.1.197): it
// writes MEMORY.md, an index it loads into every session, and a file per
// topic, in ~/.claude/projects/<sanitized-cwd>/memory/ unless the user
// settings' autoMemoryDirectory names another folder (which it then uses
// for every project; it ignores the key in a project's checked-in
// settings).
var claudeMemory = &ownMemory{setting: "autoMemoryDirectory", projects: func(s Scope) string {
	if s.ClaudeConfigDir != "" {
		return filepath.Join(s.ClaudeConfigDir, "projects")
	}
	return filepath.Join(s.Home, ".claude", "projects")
}}

// memorySet is the hooks file's setting of the client's memory folder to
// in.MemoryDir; with it empty (no hive) it only recognises memminer's
// value (ourMemoryDir), to take it out. A value someone else set is
// theirs: connect leaves it, and the client's memory stays where it
// names.
func (m *ownMemory) memorySet(in Install) jsonSet {
	value := ""
	if in.MemoryDir != "" {
		b, _ := json.Marshal(in.MemoryDir)
		value = string(b)
	}
	return jsonSet{path: m.setting, value: value, ours: ourMemoryDir(in.MemoryDir, in.hive), yield: true}
}

// ourMemoryDir recognises memminer's value of the client's memory
// folder: dir, the folder connect sets for this hive, wing and machine,
// or a folder of the hive (hiveDir) at <agents>/<wing>/ named by
// hive.ClientMemoryDirName (set for another wing or machine). A folder
// merely named like one (/x/team-memory.shared) is the user's.
func ourMemoryDir(dir, hiveDir string) func(gjson.Result) bool {
	return func(r gjson.Result) bool {
		if r.Type != gjson.String || r.Str == "" {
			return false
		}
		v := filepath.Clean(r.Str)
		if dir != "" && v == filepath.Clean(dir) {
			return true
		}
		if hiveDir == "" || !filepath.IsAbs(v) {
			return false
		}
		rel, err := filepath.Rel(filepath.Clean(hiveDir), v)
		if err != nil {
			return false
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) < 3 || slices.Contains(parts, "..") || slices.Contains(parts, ".") {
			return false
		}
		_, ok := hive.ClientOf(parts[len(parts)-1] + "/")
		return ok
	}
}

// MemoryResult is what connect did with the client's own memory: the
// folder of the hive the client keeps it in from now on, and the files
// it had written before, copied there.
type MemoryResult struct {
	// Dir is the client's memory folder in the hive.
	Dir string `json:"dir"`
	// Settings is the client's file whose Setting names Dir.
	Settings string `json:"settings"`
	Setting  string `json:"setting"`
	// Imported are the files copied in (on a dry run, that would be).
	Imported []Copy `json:"imported"`
	// Unchanged counts the files already in Dir with the same content.
	Unchanged int `json:"unchanged"`
	// Skipped are the files of the client's memory not copied, and why:
	// a link out of the client's folder, a file that is not a regular
	// .md file.
	Skipped []Skip `json:"skipped"`
	// Index is Dir's MEMORY.md when connect wrote it (Dir had none): a
	// line for each project imported.
	Index string `json:"index,omitempty"`
}

// Copy is one file of the client's memory copied into the hive.
type Copy struct {
	From string `json:"from"`
	To   string `json:"to"`
	// SecretsHidden counts the secrets replaced in the copy, as remember
	// does (secrets.RedactWritten): the hive is replicated to every
	// machine, so a secret is never copied there as typed.
	SecretsHidden int `json:"secrets_hidden,omitempty"`
}

// Skip is a file of the client's memory connect does not copy.
type Skip struct {
	From   string `json:"from"`
	Reason string `json:"reason"`
}

// memoryPlan is what connecting does with the client's own memory.
type memoryPlan struct {
	res  MemoryResult
	data [][]byte // the content of each of res.Imported
}

// planMemory is what connecting does with the client's own memory
// (OwnMemory), given the plans of its files: res gets the plan's Memory
// and, when the settings name another folder, a note; nil when there is
// nothing to do.
func (a Agent) planMemory(opts Options, plans []filePlan, res *Result) (*memoryPlan, error) {
	if !a.OwnMemory(opts.Scope) || opts.Install.MemoryDir == "" {
		return nil, nil
	}
	i := slices.IndexFunc(plans, func(p filePlan) bool { return p.f.role == RoleHooks })
	if i < 0 {
		return nil, nil
	}
	mem, note, err := a.memory.plan(opts.Scope, opts.Install.MemoryDir, plans[i].f.path, plans[i].new)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", a.Name, err)
	}
	if note != "" {
		res.Note = strings.TrimPrefix(res.Note+"; "+note, "; ")
	}
	if mem != nil {
		res.Memory = &mem.res
	}
	return mem, nil
}

// run copies the planned files into the hive (doImport), recording the
// copies as made in the plan's result; nothing for a nil plan.
func (m *memoryPlan) run() error {
	if m == nil {
		return nil
	}
	copies, err := doImport(m.res.Dir, m.res.Imported, m.data)
	m.res.Imported = copies
	return err
}

// plan is what connecting in scope s does with the client's memory,
// given the client's settings as connect is about to write them
// (settings, at path): when they name dir, the files the client kept
// before are copied there; when they name another folder (the user's own
// setting, which connect leaves), nothing is, and note says so.
func (m *ownMemory) plan(s Scope, dir, path string, settings []byte) (plan *memoryPlan, note string, err error) {
	set := gjson.GetBytes(settings, m.setting)
	if set.String() != dir {
		return nil, fmt.Sprintf("%s sets %s to %s, not by memminer: the client keeps its own memory there, outside the hive; to bring it in, remove the setting and connect again",
			path, m.setting, set.String()), nil
	}
	projects := m.projects(s)
	copies, data, unchanged, skipped, err := importPlan(filepath.Dir(projects), projects, dir)
	if err != nil {
		return nil, "", err
	}
	plan = &memoryPlan{res: MemoryResult{Dir: dir, Settings: path, Setting: m.setting, Imported: append([]Copy{}, copies...), Unchanged: unchanged, Skipped: append([]Skip{}, skipped...)}, data: data}
	if index, b := indexOf(dir, copies); b != nil {
		plan.res.Index = index
	}
	return plan, "", nil
}

// importedDir is the folder of the memory folder that holds what the
// client remembered before connect, one folder per project.
const importedDir = "imported"

// importPlan lists the files of the client's memory before connect (in
// projects/*/memory/, projects being in the client's folder root) and
// where each goes in dir: imported/<project>/, the same relative path; a
// name taken by other content gets a number (db.2.md), so nothing is
// replaced. Files already there with the same content are counted, not
// copied again. Only regular .md files are copied, a link only when it
// leads to one inside root, and each with its secrets hidden (hideSecrets):
// the hive is replicated to every machine. The others are skipped, with
// why.
func importPlan(root, projects, dir string) (copies []Copy, data [][]byte, unchanged int, skipped []Skip, err error) {
	entries, err := os.ReadDir(projects)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, 0, nil, nil
	}
	if err != nil {
		return nil, nil, 0, nil, err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		src, why, err := memoryFolder(realRoot, filepath.Join(projects, e.Name(), "memory"))
		if err != nil {
			return nil, nil, 0, nil, err
		}
		if why != "" {
			skipped = append(skipped, Skip{From: filepath.Join(projects, e.Name(), "memory"), Reason: why})
			continue
		}
		werr := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && p == src {
				return nil
			}
			if err != nil || d.IsDir() {
				return err
			}
			if filepath.Ext(p) != ".md" {
				skipped = append(skipped, Skip{From: p, Reason: "not a .md file"})
				return nil
			}
			b, why, err := readSource(realRoot, p)
			if err != nil {
				return err
			}
			if why != "" {
				skipped = append(skipped, Skip{From: p, Reason: why})
				return nil
			}
			b, hidden := hideSecrets(b)
			rel, _ := filepath.Rel(src, p)
			to, same, err := freeName(filepath.Join(dir, importedDir, e.Name(), rel), b, copies)
			if err != nil {
				return err
			}
			if same {
				unchanged++
				return nil
			}
			copies = append(copies, Copy{From: p, To: to, SecretsHidden: hidden})
			data = append(data, b)
			return nil
		})
		if werr != nil {
			return nil, nil, 0, nil, fmt.Errorf("read the memory Claude Code kept in %s: %w", src, werr)
		}
	}
	return copies, data, unchanged, skipped, nil
}

// memoryFolder is the folder to read a project's memory from, given its
// path (projects/<project>/memory): that path, or where it leads when it
// is a symlink to a folder inside realRoot (the client's folder, symlinks
// resolved); a link elsewhere could bring any folder of the machine into
// the hive, and is not followed: why says so.
func memoryFolder(realRoot, src string) (dir, why string, err error) {
	st, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return src, "", nil // WalkDir finds nothing
	}
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return src, "", err
	}
	real, err := filepath.EvalSymlinks(src)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "a dangling link", nil
	}
	if err != nil {
		return "", "", err
	}
	if !within(realRoot, real) {
		return "", "a link to " + real + ", outside " + realRoot, nil
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", "a link to " + real + ", not a folder", nil
	}
	return real, "", nil
}

// hideSecrets is b with its secrets replaced the way remember writes a
// note (secrets.RedactWritten), and how many it replaced.
func hideSecrets(b []byte) ([]byte, int) {
	text, found := secrets.RedactWritten(string(b))
	if len(found) == 0 {
		return b, 0
	}
	return []byte(text), len(found)
}

// readSource reads a file of the client's own memory through one
// descriptor, following a symlink only to a .md file inside realRoot
// (the client's folder, symlinks resolved): a link out of it could bring
// any file of the machine into the hive, one to another file of it the
// client's credentials. why says why it is not read (a
// link out, a dangling link, not a regular file); err is another
// failure.
func readSource(realRoot, p string) (b []byte, why string, err error) {
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "a dangling link", nil
	}
	if err != nil {
		return nil, "", err
	}
	if !within(realRoot, real) {
		return nil, "a link to " + real + ", outside " + realRoot, nil
	}
	if filepath.Ext(real) != ".md" {
		return nil, "a link to " + real + ", not a .md file", nil
	}
	// Opened in realRoot, not by the path alone: hivefile.Open would
	// follow a link swapped onto the path since it was resolved to
	// whatever folder it now leads to; OpenIn follows one only inside
	// realRoot, the check just made, and opens the file through one
	// descriptor.
	f, err := hivefile.OpenIn(realRoot, real)
	if err == nil {
		b, err = io.ReadAll(f)
		f.Close()
	}
	if errors.Is(err, hivefile.ErrOutside) {
		return nil, "a link out of " + realRoot, nil
	}
	if errors.Is(err, hivefile.ErrNotRegular) {
		return nil, "not a regular file", nil
	}
	return b, "", err
}

// within says whether p is root or inside it (both clean and absolute).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// readRegular reads a regular file through one descriptor, following no
// symlink out of its directory (hivefile.Open).
func readRegular(p string) ([]byte, error) {
	f, err := hivefile.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// freeName returns where a file of content b goes: want, or want with a
// number before its extension when want holds other content; same when
// a file there already holds b. planned are copies not yet written.
func freeName(want string, b []byte, planned []Copy) (to string, same bool, err error) {
	ext := filepath.Ext(want)
	stem := strings.TrimSuffix(want, ext)
	for n := 1; ; n++ {
		to = want
		if n > 1 {
			to = stem + "." + strconv.Itoa(n) + ext
		}
		if planned != nil && containsCopyTo(planned, to) {
			continue
		}
		cur, err := readRegular(to)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return to, false, nil
		case err == nil && bytes.Equal(cur, b):
			return to, true, nil
		case err != nil && !errors.Is(err, hivefile.ErrNotRegular):
			return "", false, err
		}
	}
}

func containsCopyTo(cs []Copy, to string) bool {
	for _, c := range cs {
		if c.To == to {
			return true
		}
	}
	return false
}

// writeNew creates name, a path in root, with data, never replacing a
// file: the data goes to a temporary file beside it (named as
// atomicfile.CreateTemp names it), which is linked into place (the link
// fails when name exists) and removed. Every step is made through root,
// the hive's memory folder: the hive is shared, and a folder of it
// another user swaps for a link to a folder of the person's own cannot
// lead the copy out of it.
func writeNew(root *os.Root, name string, data []byte) error {
	dir := filepath.Dir(name)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, tmp, err := createTemp(root, name)
	if err != nil {
		return err
	}
	defer root.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := root.Link(tmp, name); err != nil {
		return err
	}
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// createTemp creates, in root, the temporary file a write of name goes
// through, named as atomicfile.CreateTemp names it (".NAME.tmp-N"), and
// returns it with its name in root.
func createTemp(root *os.Root, name string) (*os.File, string, error) {
	for try := 0; ; try++ {
		tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp-"+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, tmp, err
	}
}

// doImport copies the planned files into the hive, each to a name no
// file holds (a name taken since the plan gets the next number), then
// writes the folder's index (indexOf). The folder is made when missing. It returns the copies as made.
func doImport(dir string, copies []Copy, data [][]byte) ([]Copy, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return copies[:0], err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return copies[:0], err
	}
	defer root.Close()
	for i := range copies {
		for {
			name, err := filepath.Rel(dir, copies[i].To)
			if err != nil {
				return copies[:i], fmt.Errorf("copy %s into the hive: %w", copies[i].From, err)
			}
			err = writeNew(root, name, data[i])
			if err == nil {
				break
			}
			if !errors.Is(err, fs.ErrExist) {
				return copies[:i], fmt.Errorf("copy %s into the hive: %w", copies[i].From, err)
			}
			to, same, err := freeName(copies[i].To, data[i], nil)
			if err != nil {
				return copies[:i], err
			}
			if same {
				break
			}
			copies[i].To = to
		}
	}
	if index, b := indexOf(dir, copies); b != nil {
		if err := writeNew(root, indexName, b); err != nil && !errors.Is(err, fs.ErrExist) {
			return copies, fmt.Errorf("write %s: %w", index, err)
		}
	}
	return copies, nil
}

// indexName is the file Claude Code loads from its memory folder.
const indexName = "MEMORY.md"

// indexOf is the index, MEMORY.md, dir gets when it has none and holds
// (or copies will hold) the index of a project imported: a line linking
// each, so the client, which loads only the index, finds them. A
// MEMORY.md there is the client's and is never touched: b is nil.
func indexOf(dir string, copies []Copy) (index string, b []byte) {
	index = filepath.Join(dir, indexName)
	if _, err := os.Lstat(index); !errors.Is(err, fs.ErrNotExist) {
		return index, nil
	}
	imported := filepath.Join(dir, importedDir)
	projects := map[string]bool{}
	if entries, err := os.ReadDir(imported); err == nil {
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(imported, e.Name(), indexName)); err == nil {
				projects[e.Name()] = true
			}
		}
	}
	for _, c := range copies {
		if rel, err := filepath.Rel(imported, c.To); err == nil && filepath.Base(rel) == indexName && filepath.Dir(rel) != "." && !strings.Contains(filepath.Dir(rel), string(filepath.Separator)) {
			projects[filepath.Dir(rel)] = true
		}
	}
	if len(projects) == 0 {
		return index, nil
	}
	names := make([]string, 0, len(projects))
	for p := range projects {
		names = append(names, p)
	}
	sort.Strings(names)
	var out strings.Builder
	for _, p := range names {
		fmt.Fprintf(&out, "- [Memory of project %s](%s/%s/%s) — what was remembered there before memminer connect\n", p, importedDir, p, indexName)
	}
	return index, []byte(out.String())
}
