package wakeup

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/markdown"
	"github.com/memminer/memminer/memory/secrets"
	"github.com/memminer/memminer/palace"
)

// IdentityFile is the name of an agent's identity file, beside its memory.md.
const IdentityFile = hive.IdentityFile

// maxIdentityFileBytes bounds what is read of an identity.md from disk.
const maxIdentityFileBytes = 64 << 10

// Where an identity line came from (IdentityLine.From).
const (
	FromIdentityFile = "identity.md"
	FromFrontmatter  = "frontmatter identity"
	FromRole         = "frontmatter role"
	FromHeading      = "heading"
	FromNone         = "none"
)

// NoIdentity is the text of a wing that records no identity.
const NoIdentity = "no identity recorded"

// identityHeadings are the headings whose first paragraph is an identity.
var identityHeadings = map[string]bool{"identity": true, "role": true, "about": true}

// isIdentityHeading reports whether a note's nearest heading is Identity,
// Role or About.
func isIdentityHeading(heading string) bool {
	parts := govern.HeadingParts(heading)
	if len(parts) == 0 {
		return false
	}
	h := strings.ToLower(strings.TrimRight(parts[len(parts)-1], ": "))
	return identityHeadings[h]
}

// isIdentitySource reports whether a source is an identity.md file.
func isIdentitySource(path string) bool {
	return strings.EqualFold(filepath.Base(path), IdentityFile)
}

// wingIdentity finds a wing's identity, in order of preference:
//
//  1. identity.md among the wing's sources (its frontmatter identity: or, if
//     none, its notes joined); when the wing was mined from a single file, an
//     identity.md beside that file, read with readFile if it is set;
//  2. frontmatter identity: in memory.md, then in the wing's other files;
//  3. frontmatter role:, likewise;
//  4. the first paragraph under a heading named Identity, Role or About,
//     in memory.md first;
//  5. NoIdentity.
func wingIdentity(info palace.WingInfo, sources []palace.Source, notes []palace.Note, readFile func(string) ([]byte, error)) (text, from string) {
	ordered := preferMemory(sources)
	for _, s := range ordered {
		if !isIdentitySource(s.Path) {
			continue
		}
		if v := strings.TrimSpace(s.Frontmatter["identity"]); v != "" {
			return v, FromIdentityFile
		}
		var parts []string
		for _, n := range notes {
			if n.Source == s.Path {
				parts = append(parts, flatten(n.Text))
			}
		}
		if t := strings.Join(parts, " "); t != "" {
			return t, FromIdentityFile
		}
	}
	if readFile != nil {
		if t, ok := identityFromDisk(info.Roots, sources, readFile); ok {
			return t, FromIdentityFile
		}
	}
	for _, key := range []string{"identity", "role"} {
		for _, s := range ordered {
			if v := strings.TrimSpace(s.Frontmatter[key]); v != "" {
				if key == "identity" {
					return v, FromFrontmatter
				}
				return v, FromRole
			}
		}
	}
	for _, s := range ordered {
		for _, n := range notes {
			if n.Source == s.Path && isIdentityHeading(n.Heading) {
				return flatten(n.Text), FromHeading
			}
		}
	}
	return NoIdentity, FromNone
}

// preferMemory orders sources with memory.md files first, then by path.
func preferMemory(sources []palace.Source) []palace.Source {
	var first, rest []palace.Source
	for _, s := range sources {
		// memory.md's frontmatter and headings are preferred over the
		// wing's other files.
		if hive.IsMainMemoryFile(s.Path) {
			first = append(first, s)
		} else {
			rest = append(rest, s)
		}
	}
	return append(first, rest...)
}

// identityFromDisk reads an identity.md that lies beside a wing's mined
// file but was not mined with it (the wing's root is a single file). An
// agent directory mined whole has its identity.md in the palace already.
func identityFromDisk(roots []string, sources []palace.Source, readFile func(string) ([]byte, error)) (string, bool) {
	mined := map[string]bool{}
	for _, s := range sources {
		mined[s.Path] = true
	}
	for _, root := range roots {
		if !mined[root] {
			continue // a directory root: its identity.md, if any, was mined
		}
		path := filepath.Join(filepath.Dir(root), IdentityFile)
		if mined[path] {
			continue
		}
		data, err := readFile(path)
		if err != nil || len(data) > maxIdentityFileBytes {
			continue
		}
		t, err := parseIdentity(data)
		if err != nil || t == "" {
			continue
		}
		return t, true
	}
	return "", false
}

// parseIdentity extracts the identity text of an identity.md file.
func parseIdentity(data []byte) (string, error) {
	doc, err := markdown.Parse(data, markdown.MemoryOptions())
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", IdentityFile, err)
	}
	// A file that was not mined: its secrets are hidden here, as the
	// miner hides them in the notes it stores.
	mask := secrets.Scan(string(data))
	if v, ok := doc.Frontmatter["identity"].(string); ok && strings.TrimSpace(v) != "" {
		return mask.Hide(strings.TrimSpace(v)), nil
	}
	var parts []string
	for _, n := range doc.Notes {
		parts = append(parts, flatten(mask.Hide(n.Text)))
	}
	return strings.Join(parts, " "), nil
}

// ReadFileLimited reads at most maxIdentityFileBytes+1 bytes of path; it is
// what a command passes as Options.ReadFile.
// Like every read of a hive file it refuses a file that is not regular.
func ReadFileLimited(path string) ([]byte, error) {
	return hivefile.ReadLimited(path, maxIdentityFileBytes+1)
}

// Identity returns the identity line of the wing info describes (one of
// p.Wings()) as Build finds it (readFile as in Options.ReadFile); the
// index of the hive shows the same line. The caller passes the info it
// listed: looking the wing up here would list every wing for each one, a
// catalogue of n wings then costing n² (3,000 wings: 20 s).
func Identity(p *palace.Palace, info palace.WingInfo, readFile func(string) ([]byte, error)) IdentityLine {
	text, from := wingIdentity(info, p.Sources(info.ID), p.Notes(info.ID), readFile)
	return IdentityLine{Wing: info.ID, Text: text, From: from}
}
