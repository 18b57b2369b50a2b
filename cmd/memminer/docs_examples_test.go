package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// exampleLine is a command line of a code block: an optional prompt, sudo
// and environment assignments, then memminer and its arguments.
var exampleLine = regexp.MustCompile(`^\s*(?:\$ )?(?:sudo )?(?:[A-Z_]+=\S* )*memminer((?: .*)?)$`)

// inlineExample is a code span of prose that starts a memminer command line.
var inlineExample = regexp.MustCompile("`(?:[A-Z_]+=\\S* )*memminer((?: [^`]*)?)`")

// example is a memminer command line of the docs: its arguments as
// written, and the line of the markdown it is on.
type example struct {
	line int
	args string
	// synopsis is a code span of prose, which may name a command alone
	// or stand for values with placeholders (`--tokens N`).
	synopsis bool
}

// examples are the memminer command lines of the code blocks (fenced or
// indented) of markdown and of its prose's code spans, each with its line
// number.
func examples(markdown string) []example {
	var out []example
	inFence := false
	for i, line := range strings.Split(markdown, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			continue
		}
		if !inFence && !strings.HasPrefix(line, "    ") {
			// Prose names commands in code spans: `memminer skill list`.
			for _, m := range inlineExample.FindAllStringSubmatch(line, -1) {
				out = append(out, example{i + 1, m[1], true})
			}
			continue
		}
		if m := exampleLine.FindStringSubmatch(line); m != nil {
			// `memminer pack NAME [--tokens N]` is a synopsis too.
			out = append(out, example{i + 1, m[1], strings.Contains(m[1], " [")})
		}
	}
	return out
}

// parseExample parses args as memminer does, in a root of their own: the
// flags with their values, then the positional arguments the command
// checks.
func parseExample(args []string) error {
	root := newApp(&bytes.Buffer{}, &bytes.Buffer{}, os.Getenv).rootFor(args)
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}

// exampleArgs are the words of an example's arguments up to the first
// shell operator or comment, without the brackets that mark optional ones
// and with a quoted argument one word, as the shell gives it.
func exampleArgs(line string) []string {
	var args []string
	for _, w := range shellWords(line) {
		if !w.quoted && (w.text == "#" || w.text == "|" || w.text == "&&" || w.text == ";" || strings.HasPrefix(w.text, ">") || strings.HasPrefix(w.text, "<") || w.text == "…") {
			break
		}
		text := w.text
		if !w.quoted {
			text = strings.Trim(text, "[]")
		}
		if text != "" || w.quoted {
			args = append(args, text)
		}
	}
	return args
}

// shellWord is a word of a command line, and whether quotes made it.
type shellWord struct {
	text   string
	quoted bool
}

// shellWords splits line into words at blanks outside '…' and "…"
// quotes, the quotes taken away.
func shellWords(line string) []shellWord {
	var (
		words []shellWord
		cur   strings.Builder
		in    bool // inside a word
		quote rune
		w     shellWord
	)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in, w.quoted = r, true, true
		case r == ' ' || r == '\t':
			if in {
				w.text = cur.String()
				words = append(words, w)
				cur.Reset()
				in, w = false, shellWord{}
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		w.text = cur.String()
		words = append(words, w)
	}
	return words
}

// TestDocsExamplesRun checks every memminer command line in the code
// blocks and code spans of the repository's markdown against the binary's
// commands: the command exists, and each --flag is one it takes and not an
// old name kept hidden. A command line of a code block (not a synopsis)
// is parsed as the command parses it: its flags' values and its arguments
// must be ones the command takes. The outputs are not checked here.
func TestDocsExamplesRun(t *testing.T) {
	root := newApp(&bytes.Buffer{}, &bytes.Buffer{}, os.Getenv).rootCmd()
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, file)
		for _, e := range examples(string(data)) {
			line, ex := e.line, e.args
			args := exampleArgs(ex)
			if len(args) == 0 || strings.HasPrefix(args[0], "-") {
				continue // memminer --version and the like
			}
			cmd, _, err := root.Find(args)
			if err != nil || cmd == root {
				t.Errorf("%s:%d: memminer%s: no such command (%v)", rel, line, ex, err)
				continue
			}
			for _, a := range args {
				name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if !strings.HasPrefix(a, "--") || name == "" || name == "help" {
					continue
				}
				f := cmd.Flags().Lookup(name)
				if f == nil {
					f = cmd.InheritedFlags().Lookup(name)
				}
				switch {
				case f == nil:
					t.Errorf("%s:%d: memminer%s: %s takes no --%s", rel, line, ex, cmd.CommandPath(), name)
				case f.Hidden:
					t.Errorf("%s:%d: memminer%s: --%s is an old name kept hidden; write the flag --help shows", rel, line, ex, name)
				}
			}
			if !e.synopsis && !slices.Contains(args, "--help") {
				if err := parseExample(args); err != nil {
					t.Errorf("%s:%d: memminer%s: %v", rel, line, ex, err)
				}
			}
		}
	}
}

// docBlocks are code blocks of the docs whose command lines run as
// written, in order, against a hive of the examples, mined, with HOME and
// the working directory a temporary one (~ is HOME): each must exit 0.
// setup makes the files a block names.
var docBlocks = []struct {
	file  string
	first string // a command line of the block, which finds it
	setup func(t *testing.T, c *cli, markdown string)
}{
	{file: "docs/connect.md", first: "memminer connect claude-code --wing dwight"},
	{file: "docs/connect.md", first: "memminer handoff --wing dwight --to pam"},
	{file: "docs/capture.md", first: "memminer capture --client claude-code", setup: func(t *testing.T, c *cli, _ string) {
		copyFile(t, filepath.Join(repoRoot, "clients", "capture", "testdata", "claude-code.jsonl"), filepath.Join(c.env["HOME"], ".claude", "projects", "P", "SESSION.jsonl"))
		copyFile(t, filepath.Join(repoRoot, "clients", "capture", "testdata", "codex.jsonl"), filepath.Join(c.env["HOME"], "ROLLOUT.jsonl"))
	}},
	{file: "docs/skills.md", first: "memminer skill propose failover-drill", setup: func(t *testing.T, c *cli, markdown string) {
		// The SKILL.md the page shows.
		_, skillMD, _ := strings.Cut(markdown, "```markdown\n")
		skillMD, _, _ = strings.Cut(skillMD, "```")
		testutil.WriteFile(t, filepath.Join(c.env["HOME"], "SKILL.md"), skillMD)
	}},
}

// handoffRef is a handoff's reference in a command line: the doc's own,
// which the test replaces with the one the handoff before it made.
var handoffRef = regexp.MustCompile(`^ho-[0-9a-f]{8}$`)

// TestDocsBlocksRun runs docBlocks.
func TestDocsBlocksRun(t *testing.T) {
	for _, b := range docBlocks {
		t.Run(b.file+" "+b.first, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(repoRoot, b.file))
			if err != nil {
				t.Fatal(err)
			}
			block := fencedBlock(string(data), b.first)
			if len(block) == 0 {
				t.Fatalf("%s has no code block with %q", b.file, b.first)
			}
			c := newCLI(t)
			c.env["MEMMINER_HIVE"] = c.hive
			home := c.env["HOME"]
			c.ok("mine")
			if b.setup != nil {
				b.setup(t, c, string(data))
			}
			t.Chdir(home)
			ref := ""
			for _, e := range block {
				args := exampleArgs(e.args)
				for i, a := range args {
					if rest, ok := strings.CutPrefix(a, "~/"); ok {
						args[i] = filepath.Join(home, rest)
					}
					if handoffRef.MatchString(a) && ref != "" {
						args[i] = ref
					}
				}
				if strings.Contains(e.args, "--project") {
					// The project is the user's: it is there before connect.
					i := slices.Index(args, "--project")
					if err := os.MkdirAll(args[i+1], 0o755); err != nil {
						t.Fatal(err)
					}
				}
				out, stderr, code := c.run(args...)
				if code != 0 {
					t.Errorf("%s:%d: memminer%s: exit %d\n%s%s", b.file, e.line, e.args, code, out, stderr)
				}
				if m := handoffRefRe.FindString(out); m != "" && args[0] == "handoff" {
					ref = m
				}
			}
		})
	}
}

// fencedBlock is the command lines of the fenced code block of markdown
// that holds a line containing first.
func fencedBlock(markdown, first string) []example {
	var block []example
	in, found := false, false
	for i, line := range strings.Split(markdown, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") {
			if in && found {
				return block
			}
			in, block = !in, nil
			continue
		}
		if !in {
			continue
		}
		found = found || strings.Contains(line, first)
		if m := exampleLine.FindStringSubmatch(line); m != nil {
			block = append(block, example{line: i + 1, args: m[1]})
		}
	}
	return nil
}

// copyFile copies from to to, making to's directory.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, to, string(data))
}
