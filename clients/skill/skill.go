// Package skill is the hive mind's shared skills: reusable knowledge an
// agent proposes and a person publishes, as folders of a SKILL.md (name
// and description in its frontmatter) that Claude Code and Codex load.
// HIVE/skills/proposed/NAME waits for approval, HIVE/skills/published/NAME
// is offered to every connected client, HIVE/skills/deprecated/NAME is
// history; HIVE/skills/LOG.md records each step. The rules are in
// docs/skills.md.
package skill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/memory/markdown"
	"github.com/memminer/memminer/memory/secrets"
)

// Dir is the skills' directory in a hive, never an agent's.
const Dir = hive.SkillsDir

// FileName is a skill's entry point, as the clients read it.
const FileName = "SKILL.md"

// States of a skill: the folder it lies in.
const (
	Proposed   = "proposed"
	Published  = "published"
	Deprecated = "deprecated"
)

// States lists the states in a skill's order of life.
var States = []string{Proposed, Published, Deprecated}

// MaxBytes bounds a SKILL.md.
const MaxBytes = 256 << 10

// maxNameLen and maxDescriptionLen are Claude Code's limits, which Codex
// accepts too.
const maxNameLen, maxDescriptionLen = 64, 1024

// Errors callers tell apart.
var (
	ErrBadSkill = errors.New("not a valid skill")
	ErrNoSkill  = errors.New("no such skill")
	ErrExists   = errors.New("skill already exists")
	// ErrSecret means a SKILL.md holds a credential (package secrets, the
	// rules remember writes by): a skill is copied to every connected
	// client and shown in search, so it is neither proposed nor published.
	ErrSecret = errors.New("the skill holds a secret")
)

// Skill is one skill of the hive.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	State       string `json:"state"`
	// Path is its SKILL.md, absolute.
	Path string `json:"path"`
}

// CheckName refuses a name the clients do not load: lower-case letters,
// digits and hyphens, at most 64.
func CheckName(name string) error {
	ok := name != "" && len(name) <= maxNameLen && name[0] != '-'
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%w: name %q: use lower-case letters, digits and hyphens, at most %d", ErrBadSkill, name, maxNameLen)
	}
	return nil
}

// Parse checks a SKILL.md for skill name: frontmatter with name (the
// folder's name) and a description, as both clients require.
func Parse(name string, data []byte) (Skill, error) {
	if err := CheckName(name); err != nil {
		return Skill{}, err
	}
	if len(data) > MaxBytes {
		return Skill{}, fmt.Errorf("%w: %s is over %d bytes", ErrBadSkill, FileName, MaxBytes)
	}
	doc, err := markdown.Parse(data, markdown.MemoryOptions())
	if err != nil {
		return Skill{}, fmt.Errorf("%w: %v", ErrBadSkill, err)
	}
	fm := markdown.FrontmatterScalars(doc.Frontmatter)
	s := Skill{Name: strings.TrimSpace(fm["name"]), Description: strings.TrimSpace(fm["description"])}
	switch {
	case s.Name == "":
		return s, fmt.Errorf("%w: %s has no frontmatter name: (--- name: %s / description: … ---)", ErrBadSkill, FileName, name)
	case s.Name != name:
		return s, fmt.Errorf("%w: its frontmatter name is %q, not %q", ErrBadSkill, s.Name, name)
	case s.Description == "":
		return s, fmt.Errorf("%w: %s has no frontmatter description: (what it does and when to use it)", ErrBadSkill, FileName)
	case len(s.Description) > maxDescriptionLen:
		return s, fmt.Errorf("%w: its description is over %d characters", ErrBadSkill, maxDescriptionLen)
	}
	return s, nil
}

// folder is skill name's folder in state.
func folder(hiveDir, state, name string) string {
	return filepath.Join(hiveDir, rel(state, name))
}

// rel is skill name's folder in state, relative to the hive.
func rel(state, name string) string { return filepath.Join(Dir, state, name) }

// inHive runs f with the hive opened as a root: every folder a skill
// moves through is reached from it, and a link another user of the hive
// put on the way cannot lead a move, a write or a removal out of it.
func inHive(hiveDir string, f func(*os.Root) error) error {
	root, err := os.OpenRoot(hiveDir)
	if err != nil {
		return err
	}
	defer root.Close()
	return f(root)
}

// Propose puts SKILL.md content data in proposed/name, for a person to
// approve; by is who proposes. An improvement of a published skill is
// proposed under its name; a proposal already waiting is refused
// (ErrExists).
func Propose(hiveDir, name string, data []byte, by string) (Skill, error) {
	s, err := Parse(name, data)
	if err != nil {
		return s, err
	}
	if err := refuseSecrets(name, data); err != nil {
		return s, err
	}
	dir := rel(Proposed, name)
	err = inHive(hiveDir, func(root *os.Root) error {
		if _, err := root.Lstat(dir); err == nil {
			return fmt.Errorf("%w: %s waits for approval already (memminer skill approve|reject %s)", ErrExists, name, name)
		}
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		// Written whole, then renamed in: a reader never sees half.
		tmp := filepath.Join(dir, "."+FileName+".tmp")
		if err := root.WriteFile(tmp, data, 0o644); err != nil {
			return err
		}
		return root.Rename(tmp, filepath.Join(dir, FileName))
	})
	if err != nil {
		return s, err
	}
	s.State, s.Path = Proposed, filepath.Join(hiveDir, dir, FileName)
	return s, logf(hiveDir, "proposed %s by %s", name, by)
}

// Approve publishes proposed/name; the version it replaces, if any, goes
// to deprecated/ as history.
func Approve(hiveDir, name, by string) (Skill, error) {
	s, data, err := loadData(hiveDir, Proposed, name)
	if err != nil {
		return s, err
	}
	// A proposal edited in the hive since it was proposed is checked again.
	if err := refuseSecrets(name, data); err != nil {
		return s, err
	}
	to := rel(Published, name)
	err = inHive(hiveDir, func(root *os.Root) error {
		if _, err := root.Lstat(to); err == nil {
			if err := retire(root, name); err != nil {
				return err
			}
		}
		if err := root.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return root.Rename(rel(Proposed, name), to)
	})
	if err != nil {
		return s, err
	}
	s.State, s.Path = Published, filepath.Join(hiveDir, to, FileName)
	return s, logf(hiveDir, "approved %s by %s", name, by)
}

// Reject drops proposed/name; note says why, in the log.
func Reject(hiveDir, name, by, note string) error {
	if _, err := load(hiveDir, Proposed, name); err != nil {
		return err
	}
	if err := inHive(hiveDir, func(root *os.Root) error { return root.RemoveAll(rel(Proposed, name)) }); err != nil {
		return err
	}
	return logf(hiveDir, "rejected %s by %s: %s", name, by, strings.Join(strings.Fields(note), " "))
}

// Deprecate moves published/name to deprecated/: it leaves the clients at
// their next sync and stays as history. It returns the skill as it now
// lies.
func Deprecate(hiveDir, name, by string) (Skill, error) {
	s, err := load(hiveDir, Published, name)
	if err != nil {
		return s, err
	}
	if err := inHive(hiveDir, func(root *os.Root) error { return retire(root, name) }); err != nil {
		return s, err
	}
	s.State, s.Path = Deprecated, filepath.Join(folder(hiveDir, Deprecated, name), FileName)
	return s, logf(hiveDir, "deprecated %s by %s", name, by)
}

// retire moves published/name to deprecated/name, replacing an older one.
func retire(root *os.Root, name string) error {
	to := rel(Deprecated, name)
	if err := root.RemoveAll(to); err != nil {
		return err
	}
	if err := root.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return root.Rename(rel(Published, name), to)
}

// load reads skill name in state, following no link and reading nothing
// but a regular file (hivefile).
func load(hiveDir, state, name string) (Skill, error) {
	s, _, err := loadData(hiveDir, state, name)
	return s, err
}

// loadData is load, with the SKILL.md it read.
func loadData(hiveDir, state, name string) (Skill, []byte, error) {
	if err := CheckName(name); err != nil {
		return Skill{}, nil, err
	}
	path := filepath.Join(folder(hiveDir, state, name), FileName)
	data, err := hivefile.ReadLimited(path, MaxBytes+1)
	if errors.Is(err, fs.ErrNotExist) {
		return Skill{}, nil, fmt.Errorf("%w: no %s skill %s (memminer skill list)", ErrNoSkill, state, name)
	}
	if err != nil {
		return Skill{}, nil, err
	}
	s, err := Parse(name, data)
	s.State, s.Path = state, path
	return s, data, err
}

// List lists the hive's skills, by state then name. A folder whose
// SKILL.md is not valid is listed with its error in problems.
func List(hiveDir string) (skills []Skill, problems []error, err error) {
	return list(hiveDir, func(string) bool { return true })
}

// list is List of the skills of the states read says to read. Every
// state's folder is listed, so that one that cannot be fails alike
// whichever states are read.
func list(hiveDir string, read func(state string) bool) (skills []Skill, problems []error, err error) {
	skills = []Skill{}
	for _, state := range States {
		entries, rerr := os.ReadDir(filepath.Join(hiveDir, Dir, state))
		if errors.Is(rerr, fs.ErrNotExist) {
			continue
		}
		if rerr != nil {
			return skills, problems, rerr
		}
		if !read(state) {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			s, lerr := load(hiveDir, state, e.Name())
			if lerr != nil {
				problems = append(problems, fmt.Errorf("%s/%s: %w", state, e.Name(), lerr))
				continue
			}
			skills = append(skills, s)
		}
	}
	return skills, problems, nil
}

// PublishedSkills lists the published skills. It reads no other
// state's SKILL.md: search and sync call it every time.
func PublishedSkills(hiveDir string) ([]Skill, error) {
	published, _, err := list(hiveDir, func(state string) bool { return state == Published })
	return published, err
}

// logFile is the skills' log.
func logFile(hiveDir string) string { return filepath.Join(hiveDir, Dir, "LOG.md") }

// logf appends one dated line to the log, in one write.
func logf(hiveDir, format string, args ...any) error {
	f, err := hivefile.OpenFile(logFile(hiveDir), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("- %s ", time.Now().UTC().Format(time.RFC3339)) + fmt.Sprintf(format, args...) + "\n"
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// refuseSecrets returns ErrSecret, naming where, when data holds a
// credential.
func refuseSecrets(name string, data []byte) error {
	if found := secrets.FindWritten(string(data)); len(found) > 0 {
		return fmt.Errorf("%w: %s: %s", ErrSecret, name, secrets.Describe(found))
	}
	return nil
}
