// Package pack reads, writes and renders Context Packs: task-scoped
// selections of a hive's notes, packs/<name>.md, each with what it uses,
// what it must never bring, how old its files may be, and a body saying
// the task it is for. A pack is rendered governed (superseded and
// unapproved notes out, approved first) within a token budget, with a
// warning for each stale file it uses, and learns from use through its
// validation log. docs/packs.md has the rules.
package pack

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/govern"
)

// MaxBytes bounds a pack file: a pack is a short selection, not memory.
const MaxBytes = 256 << 10

// Errors callers tell apart.
var (
	// ErrNoPack means no pack has the name.
	ErrNoPack = errors.New("no such pack")
	// ErrBadName means a name is no valid pack name.
	ErrBadName = errors.New("not a valid pack name")
	// ErrMalformed is matched by a *SyntaxError.
	ErrMalformed = errors.New("malformed pack")
	// ErrExists means pack new would overwrite a pack.
	ErrExists = errors.New("pack exists")
	// ErrLinkedDir means packs/ is a symlink: packs are read and written
	// only in the hive itself, never through a link that may lead out.
	ErrLinkedDir = errors.New("packs directory is a symlink")
)

// checkDir refuses a packs/ that is a symlink; one that does not exist
// yet is fine.
func checkDir(hiveDir string) error {
	info, err := os.Lstat(Dir(hiveDir))
	if err == nil && info.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%w: %s; make it a directory of the hive", ErrLinkedDir, Dir(hiveDir))
	}
	return nil
}

// SyntaxError is a pack file that cannot be read, at a line.
type SyntaxError struct {
	// File is the pack relative to the hive ("packs/deploy.md").
	File string
	// Line is 1-based; 0 when the problem is the whole file.
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Is makes a *SyntaxError match ErrMalformed.
func (e *SyntaxError) Is(target error) bool { return target == ErrMalformed }

// Kinds of entry.
const (
	Wing   = "wing"   // every note of a wing
	File   = "file"   // every note of a file, relative to the hive
	Tag    = "tag"    // every note carrying a tag
	Query  = "query"  // the hits of a search
	Status = "status" // avoid only: notes of a status
)

// Entry is one item of use: or avoid:, "kind:value".
type Entry struct {
	Kind, Value string
	// Line is where the entry is in the pack file (0 when made, not read).
	Line int
}

func (e Entry) String() string { return e.Kind + ":" + e.Value }

// ParseEntry reads "kind:value"; status: is allowed only when avoid is set.
func ParseEntry(s string, avoid bool) (Entry, error) {
	kind, value, ok := strings.Cut(strings.TrimSpace(s), ":")
	kind, value = strings.ToLower(strings.TrimSpace(kind)), strings.TrimSpace(value)
	want := "wing:ID, file:PATH, tag:T or query:TEXT"
	if avoid {
		want = "wing:ID, file:PATH, tag:T, query:TEXT or status:S"
	}
	if !ok || value == "" {
		return Entry{}, fmt.Errorf("entry %q: want %s", s, want)
	}
	e := Entry{Kind: kind, Value: value}
	switch kind {
	case Wing:
		w, err := hive.NormalizeWingID(value)
		if err != nil {
			return Entry{}, fmt.Errorf("entry %q: %v", s, err)
		}
		e.Value = w
	case File:
		p := filepath.ToSlash(filepath.Clean(filepath.FromSlash(value)))
		if filepath.IsAbs(value) || p == ".." || strings.HasPrefix(p, "../") {
			return Entry{}, fmt.Errorf("entry %q: a file is named relative to the hive, inside it", s)
		}
		e.Value = p
	case Tag:
		e.Value = govern.NormalTag(value)
		if e.Value == "" || strings.ContainsAny(e.Value, " \t") {
			return Entry{}, fmt.Errorf("entry %q: a tag is one word", s)
		}
	case Query:
	case Status:
		if !avoid {
			return Entry{}, fmt.Errorf("entry %q: status: is for avoid (use brings approved notes first anyway)", s)
		}
		st, err := govern.ParseStatus(value)
		if err != nil {
			return Entry{}, fmt.Errorf("entry %q: %v", s, err)
		}
		e.Value = string(st)
	default:
		return Entry{}, fmt.Errorf("entry %q: unknown kind %q: want %s", s, kind, want)
	}
	return e, nil
}

// Pack is a parsed pack file.
type Pack struct {
	// Name is the pack's name, its file's name without .md.
	Name string
	// Path is the pack file, absolute; File the same relative to the hive.
	Path, File string
	Use, Avoid []Entry
	// StaleAfter is how old a file the pack uses may get before it is
	// warned of; zero means the hive's stale_after.
	StaleAfter time.Duration
	// BlockStale makes a stale file refuse the pack instead of warn.
	BlockStale bool
	// ReviewDate, when set, is when the pack itself is due for review.
	ReviewDate time.Time
	// Body is the markdown after the frontmatter: the task it is for.
	Body string
	// Modified is the pack file's mtime: an edit after the last bad
	// marks clears "review needed".
	Modified time.Time
}

// keys are the frontmatter keys a pack may have.
var keys = []string{"use", "avoid", "stale_after", "block_stale", "review_date", "title", "description"}

// CheckName reports whether name is a valid pack name:
// [a-z0-9][a-z0-9._-]*, at most 64 characters, without "..".
func CheckName(name string) error {
	ok := name != "" && len(name) <= 64 && !strings.Contains(name, "..")
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '-')
	}
	if !ok {
		return fmt.Errorf("%w: %q: use lower-case letters, digits, '.', '_' and '-', starting with a letter or digit", ErrBadName, name)
	}
	return nil
}

// Parse reads a pack file's content. file names it in errors.
func Parse(name, file string, data []byte) (*Pack, error) {
	bad := func(line int, format string, args ...any) error {
		return &SyntaxError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if len(data) > MaxBytes {
		return nil, bad(0, "%d bytes, over the %d-byte limit of a pack", len(data), MaxBytes)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return nil, bad(1, `a pack starts with frontmatter: a line "---", the keys use: and avoid:, and a closing "---"`)
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if t := strings.TrimSpace(lines[i]); t == "---" || t == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, bad(1, `the frontmatter opened here is never closed by a line "---"`)
	}
	p := &Pack{Name: name, File: file, Body: strings.TrimSpace(strings.Join(lines[end+1:], "\n"))}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(lines[1:end], "\n")), &doc); err != nil {
		return nil, bad(yamlLine(err), "frontmatter is not valid YAML: %v", yamlMessage(err))
	}
	if len(doc.Content) == 0 {
		return nil, bad(1, "the frontmatter is empty; a pack needs use:")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, bad(root.Line+1, "the frontmatter must be keys and values (use:, avoid:, …)")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		line := k.Line + 1 // the file's first line is the opening "---"
		key := k.Value
		if !slices.Contains(keys, key) {
			return nil, bad(line, "unknown key %q (a pack has %s)", key, strings.Join(keys, ", "))
		}
		if seen[key] {
			return nil, bad(line, "key %q given twice", key)
		}
		seen[key] = true
		var err error
		switch key {
		case "use", "avoid":
			var entries []Entry
			entries, err = readEntries(v, key == "avoid")
			if key == "use" {
				p.Use = entries
			} else {
				p.Avoid = entries
			}
		case "stale_after":
			if p.StaleAfter, err = govern.ParseAge(scalar(v)); err != nil {
				err = lineErr{v.Line + 1, fmt.Sprintf("stale_after: %v", err)}
			}
		case "block_stale":
			switch strings.ToLower(scalar(v)) {
			case "true", "yes":
				p.BlockStale = true
			case "false", "no":
			default:
				err = lineErr{v.Line + 1, fmt.Sprintf("block_stale: %q: want true or false", scalar(v))}
			}
		case "review_date":
			if p.ReviewDate, err = time.Parse(time.DateOnly, scalar(v)); err != nil {
				err = lineErr{v.Line + 1, fmt.Sprintf("review_date: %q is not a date (want YYYY-MM-DD)", scalar(v))}
			}
		}
		var le lineErr
		if errors.As(err, &le) {
			return nil, bad(le.line, "%s", le.msg)
		}
	}
	if len(p.Use) == 0 {
		return nil, bad(2, "use: lists nothing; a pack brings at least one wing:, file:, tag: or query:")
	}
	return p, nil
}

// lineErr is an error at a line of the frontmatter, in file lines.
type lineErr struct {
	line int
	msg  string
}

func (e lineErr) Error() string { return e.msg }

// readEntries reads a use: or avoid: list (a single entry may be a scalar).
func readEntries(v *yaml.Node, avoid bool) ([]Entry, error) {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	var out []Entry
	for _, it := range items {
		value := it.Value
		switch {
		case it.Kind == yaml.MappingNode && len(it.Content) == 2 && it.Content[0].Kind == yaml.ScalarNode && it.Content[1].Kind == yaml.ScalarNode:
			// "- wing: dwight", as YAML reads an entry with a space.
			value = it.Content[0].Value + ":" + it.Content[1].Value
		case it.Kind != yaml.ScalarNode:
			return nil, lineErr{it.Line + 1, "an entry is one line of text such as wing:dwight"}
		case it.Tag == "!!null":
			continue
		}
		e, err := ParseEntry(value, avoid)
		if err != nil {
			return nil, lineErr{it.Line + 1, err.Error()}
		}
		e.Line = it.Line + 1
		out = append(out, e)
	}
	return out, nil
}

func scalar(v *yaml.Node) string {
	if v.Kind != yaml.ScalarNode {
		return ""
	}
	return strings.TrimSpace(v.Value)
}

// yamlLine is the file line of a yaml.v3 error ("yaml: line 3: …"), or 1.
func yamlLine(err error) int {
	var n int
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		if _, serr := fmt.Sscanf(msg[i:], "line %d", &n); serr == nil {
			return n + 1
		}
	}
	return 1
}

// yamlMessage is a yaml.v3 error without its "yaml: line N:" prefix.
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if strings.HasPrefix(msg, "line ") {
		if _, rest, ok := strings.Cut(msg, ": "); ok {
			return rest
		}
	}
	return msg
}

// Dir returns the packs directory of the hive.
func Dir(hiveDir string) string { return filepath.Join(hiveDir, hive.PacksDir) }

// fileOf is the pack file of name, relative to the hive.
func fileOf(name string) string { return hive.PacksDir + "/" + name + ".md" }

// Load reads the pack name of the hive. Its error matches ErrNoPack,
// ErrBadName or ErrMalformed.
func Load(hiveDir, name string) (*Pack, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if err := checkDir(hiveDir); err != nil {
		return nil, err
	}
	path := filepath.Join(Dir(hiveDir), name+".md")
	info, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		names, _ := Names(hiveDir)
		return nil, fmt.Errorf("%w %q in %s (packs: %s)", ErrNoPack, name, Dir(hiveDir), orNone(names))
	}
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &SyntaxError{File: fileOf(name), Msg: "not a regular file (a pack is never read through a symlink)"}
	}
	if info.Size() > MaxBytes {
		return nil, &SyntaxError{File: fileOf(name), Msg: fmt.Sprintf("%d bytes, over the %d-byte limit of a pack", info.Size(), MaxBytes)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := Parse(name, fileOf(name), data)
	if err != nil {
		return nil, err
	}
	p.Path, p.Modified = path, info.ModTime()
	return p, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Names lists the hive's packs by name, sorted: the packs/*.md files
// whose names are valid pack names.
func Names(hiveDir string) ([]string, error) {
	if err := checkDir(hiveDir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(Dir(hiveDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || e.IsDir() || CheckName(name) != nil {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}
