// Package preaction is the pre-action log: before an agent runs a
// high-risk shell command, its PreToolUse hook appends to the agent's own
// pre-action-log.<machine>.md the time, wing, session, working directory
// and command. It is traceability, not rollback (seed 001); the rules are
// in docs/pre-action.md.
package preaction

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/memory/secrets"
)

// DefaultPatterns are the high-risk commands logged when the pre_action
// setting names none: each a regular expression matched against the
// command (RE2, case-insensitive), none holding a comma, as the setting's
// list does not.
var DefaultPatterns = []string{
	`\brm\s+(-[a-z]*r[a-z]*f|-[a-z]*f[a-z]*r)\b`,
	`\bgit\s+push\b.*(--force\b|\s-f\b|--force-with-lease)`,
	`\bgit\s+reset\s+--hard\b`,
	`\bgit\s+clean\s+-[a-z]*f`,
	`\bdrop\s+(table|database|schema)\b`,
	`\btruncate\s+table\b`,
	`\bkubectl\s+delete\b`,
	`\bterraform\s+(apply|destroy)\b`,
	`\bhelm\s+(uninstall|delete)\b`,
	`\bdd\s+.*\bof=/dev/`,
	`\bmkfs(\.[a-z0-9]+)?\b`,
	`\b(ssh|scp|rsync)\b.*\bprod(uction)?\b`,
}

// Compile compiles patterns (DefaultPatterns when empty), case-insensitive.
func Compile(patterns []string) ([]*regexp.Regexp, error) {
	if len(patterns) == 0 {
		patterns = DefaultPatterns
	}
	out := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		re, err := regexp.Compile("(?i)" + p)
		if err != nil {
			return nil, fmt.Errorf("pre_action pattern %q: %w", p, err)
		}
		out[i] = re
	}
	return out, nil
}

// Check checks one pattern of the setting.
func Check(p string) error {
	_, err := Compile([]string{p})
	return err
}

// Match returns the first pattern command matches, and whether one does.
func Match(command string, patterns []*regexp.Regexp) (string, bool) {
	for _, re := range patterns {
		if re.MatchString(command) {
			return strings.TrimPrefix(re.String(), "(?i)"), true
		}
	}
	return "", false
}

// FilePrefix starts the name of every pre-action log,
// pre-action-log.<machine>.md: one per agent and machine, as its memory.
const FilePrefix = "pre-action-log."

// FileName is machine's pre-action log in an agent directory.
func FileName(machine string) string { return FilePrefix + machine + ".md" }

// IsLog reports whether name (a base name) is a pre-action log.
func IsLog(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), FilePrefix) && strings.HasSuffix(strings.ToLower(name), ".md")
}

// Entry is one logged command.
type Entry struct {
	Time    time.Time `json:"time"`
	Wing    string    `json:"wing"`
	Session string    `json:"session"`
	Cwd     string    `json:"cwd"`
	Command string    `json:"command"`
	// Matched is the pattern the command matched.
	Matched string `json:"matched"`
	// Pack is the Context Pack the wing loaded last, "" when none.
	Pack string `json:"pack"`
	// Notes are the notes the prompt hook gave the session, as
	// FILE:LINE, latest prompt's; none when it gave none.
	Notes []string `json:"notes"`
	// File is the log the entry is in (set by Read).
	File string `json:"file,omitempty"`
}

// header opens a new log file.
const header = "# Pre-action log\n\nHigh-risk commands, logged before they ran (memminer pre-action).\n"

// markdown is e as the log holds it: a heading and one line per field,
// each field on one line.
func (e Entry) markdown() string {
	one := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	return fmt.Sprintf("\n## %s\n\n- wing: %s\n- session: %s\n- cwd: %s\n- pack: %s\n- notes: %s\n- matched: `%s`\n- command: `%s`\n",
		e.Time.UTC().Format(time.RFC3339), one(e.Wing), one(e.Session), one(e.Cwd), one(e.Pack), one(strings.Join(e.Notes, ", ")),
		strings.ReplaceAll(one(e.Matched), "`", "'"), strings.ReplaceAll(one(e.Command), "`", "'"))
}

// Append appends e to the log at path in one O_APPEND write, creating it
// with its header; every byte already there stays.
func Append(path string, e Entry) error {
	// The log is in the shared hive: a link or a FIFO put in its place
	// is refused, not followed or waited on.
	f, err := hivefile.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	// The log replicates with the hive: a token in a command (a URL's
	// password, an Authorization header) is hidden before it is written.
	text, _ := secrets.Hide(e.markdown())
	if st.Size() == 0 {
		text = header + text
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Masked returns e with any secret in its command and working directory
// hidden: logs written before Append hid them still show none.
func (e Entry) Masked() Entry {
	e.Command, _ = secrets.Hide(e.Command)
	e.Cwd, _ = secrets.Hide(e.Cwd)
	return e
}

// Parse reads the entries of a log, in file order.
func Parse(data []byte) []Entry {
	var out []Entry
	var cur *Entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if t, ok := strings.CutPrefix(line, "## "); ok {
			when, err := time.Parse(time.RFC3339, strings.TrimSpace(t))
			if err != nil {
				cur = nil
				continue
			}
			out = append(out, Entry{Time: when})
			cur = &out[len(out)-1]
			continue
		}
		key, val, ok := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
		if cur == nil || !strings.HasPrefix(line, "- ") || !ok {
			continue
		}
		val = strings.Trim(val, "`")
		switch key {
		case "wing":
			cur.Wing = val
		case "session":
			cur.Session = val
		case "cwd":
			cur.Cwd = val
		case "matched":
			cur.Matched = val
		case "pack":
			cur.Pack = val
		case "notes":
			for _, n := range strings.Split(val, ", ") {
				if n = strings.TrimSpace(n); n != "" {
					cur.Notes = append(cur.Notes, n)
				}
			}
		case "command":
			cur.Command = val
		}
	}
	return out
}
