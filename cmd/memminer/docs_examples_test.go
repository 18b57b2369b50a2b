package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// exampleLine is a command line of a code block: an optional prompt, sudo
// and environment assignments, then memminer and its arguments.
var exampleLine = regexp.MustCompile(`^\s*(?:\$ )?(?:sudo )?(?:[A-Z_]+=\S* )*memminer((?: .*)?)$`)

// examples are the memminer command lines of the code blocks (fenced or
// indented) of markdown, each with its line number.
func examples(markdown string) map[int]string {
	out := map[int]string{}
	inFence := false
	for i, line := range strings.Split(markdown, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			continue
		}
		if !inFence && !strings.HasPrefix(line, "    ") {
			continue
		}
		if m := exampleLine.FindStringSubmatch(line); m != nil {
			out[i+1] = m[1]
		}
	}
	return out
}

// exampleArgs are the words of an example's arguments up to the first
// shell operator or comment, without the brackets that mark optional ones.
func exampleArgs(line string) []string {
	var args []string
	for _, w := range strings.Fields(line) {
		if w == "#" || w == "|" || w == "&&" || w == ";" || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<") || w == "…" {
			break
		}
		w = strings.Trim(w, "[]")
		if w != "" {
			args = append(args, w)
		}
	}
	return args
}

// TestDocsExamplesRun checks every memminer command line in the code
// blocks of the repository's markdown against the binary's commands: the
// command exists, and each --flag is one it takes and not an old name
// kept hidden. The flags' values and the outputs are not checked here.
func TestDocsExamplesRun(t *testing.T) {
	root := newApp(&bytes.Buffer{}, &bytes.Buffer{}, os.Getenv).rootCmd()
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, file)
		for line, ex := range examples(string(data)) {
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
		}
	}
}
