package hive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memminer/memminer/internal/agentglob"
)

// DefaultDir is the directory of a hive whose subdirectories are always
// agent directories.
const DefaultDir = "agents"

// Default matches the agent directories every hive has: agents/<id>.
const Default = DefaultDir + "/*"

// Globs are the patterns that match a hive's agent directories: Default,
// then the configured ones in their order. The zero Globs is Default alone.
type Globs struct {
	extra [][]string // split, without Default
}

// NewGlobs returns the Globs of Default and the patterns in extra,
// checking each (agentglob.Check). Repeats are dropped.
func NewGlobs(extra []string) (Globs, error) {
	var s Globs
	seen := map[string]bool{Default: true}
	for _, p := range extra {
		if err := agentglob.Check(p); err != nil {
			return Globs{}, fmt.Errorf("agents: %w", err)
		}
		p = path.Clean(p)
		if !seen[p] {
			seen[p] = true
			s.extra = append(s.extra, strings.Split(p, "/"))
		}
	}
	return s, nil
}

var defaultElems = strings.Split(Default, "/")

// patterns returns every pattern, split into elements, Default first.
func (s Globs) patterns() [][]string {
	return append([][]string{defaultElems}, s.extra...)
}

// Patterns returns the patterns, Default first, as they are matched.
func (s Globs) Patterns() []string {
	var out []string
	for _, p := range s.patterns() {
		out = append(out, strings.Join(p, "/"))
	}
	return out
}

// HasExtra reports whether the Globs hold more than Default.
func (s Globs) HasExtra() bool { return len(s.extra) > 0 }

// Match is a directory of the hive that a pattern matches.
type Match struct {
	// Rel is the directory relative to the hive, `/`-separated.
	Rel string
	// Path is the hive, as opened, joined with Rel.
	Path string
	// Canonical is Path with the symlinks of its parent directory
	// resolved and its own name kept (see ResolveParent): the one name of
	// the directory, however the hive was reached.
	Canonical string
	// Link is set when Path itself is a symlink to a directory.
	Link bool
	// ViaLink is set when a directory between the hive and Path is a
	// symlink, so a walk of the hive that does not follow symlinks never
	// reaches Path.
	ViaLink bool
	// Inside, when set, is the Rel of the match Path lies inside: Path is
	// part of that agent directory, not an agent directory of its own.
	Inside string
	// Target is where Path leads when it is a symlink (Link).
	Target string
	// Outside is set for a symlink whose Target is neither the hive, nor
	// inside it, nor inside the directory holding the link (agents/ may itself
	// be a link to where the agents live): no agent directory. The hive is
	// what is synced and trusted; a link out of it would bring in files
	// nobody put there.
	Outside bool
}

// find lists the directories the patterns match below hive (symlinks to
// directories included), each once, in a stable order: by pattern, Default
// first, then by path. A directory that does not exist matches nothing; the
// first other error (an unreadable directory) is returned with what was
// found.
func (s Globs) find(hive string) ([]Match, error) {
	out, err := s.list(hive, true)
	resolve := parentResolver()
	realHive := hive
	if r, rerr := filepath.EvalSymlinks(hive); rerr == nil {
		realHive = r
	}
	for i := range out {
		m := &out[i]
		m.Canonical = resolve(m.Path)
		if outer, _, ok := s.AgentOf(m.Rel); ok && outer != m.Rel {
			m.Inside = outer
		}
		if m.Link {
			m.Target, _ = filepath.EvalSymlinks(m.Path)
			holder, herr := filepath.EvalSymlinks(filepath.Dir(m.Path))
			m.Outside = m.Target != "" && !atOrBelow(realHive, m.Target) && (herr != nil || !below(holder, m.Target))
		}
	}
	return out, err
}

// below reports whether path lies strictly inside dir.
func below(dir, path string) bool {
	return path != dir && atOrBelow(dir, path)
}

// atOrBelow reports whether path is dir or lies inside it.
func atOrBelow(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// overlap reports whether the directories a and b (both resolved) are one,
// or one lies inside the other.
func overlap(a, b string) bool { return atOrBelow(a, b) || atOrBelow(b, a) }

// parents lists the directories below hive in which agent directories can
// appear: those the leading elements of a pattern match (agents/ for
// Default), each once. The hive itself is not listed.
func (s Globs) parents(hive string) ([]Match, error) {
	return s.list(hive, false)
}

// list lists what every pattern matches below hive, each directory once:
// the whole matches (leaves) or the directories leading to them.
func (s Globs) list(hive string, leaves bool) ([]Match, error) {
	var out []Match
	var firstErr error
	seen := map[string]bool{}
	for _, p := range s.patterns() {
		walk(hive, "", p, false, &firstErr, func(m Match, leaf bool) {
			if leaf && reserved(split(m.Rel)) {
				return
			}
			if leaf == leaves && !seen[m.Rel] {
				seen[m.Rel] = true
				out = append(out, m)
			}
		})
	}
	return out, firstErr
}

// walk visits the directories below dir (rel from the hive) that the
// pattern elems matches, calling visit with leaf set for whole matches and
// unset for the directories their leading elements match.
func walk(dir, rel string, elems []string, viaLink bool, firstErr *error, visit func(m Match, leaf bool)) {
	note := func(err error) {
		if *firstErr == nil && !errors.Is(err, fs.ErrNotExist) {
			*firstErr = err
		}
	}
	elem, last := elems[0], len(elems) == 1
	// A listed name comes with its type, as Lstat would give it; a literal
	// one, not listed, is Lstat'ed.
	listed := hasMeta(elem)
	type entry struct {
		name string
		typ  fs.FileMode
	}
	var names []entry
	if !listed {
		names = []entry{{name: elem}}
	} else {
		entries, err := os.ReadDir(dir)
		if err != nil {
			note(err)
			return
		}
		for _, e := range entries {
			if ok, _ := filepath.Match(elem, e.Name()); ok {
				names = append(names, entry{name: e.Name(), typ: e.Type()})
			}
		}
	}
	for _, e := range names {
		name := e.name
		if excluded(name) {
			continue
		}
		p := filepath.Join(dir, name)
		typ := e.typ
		if !listed {
			fi, err := os.Lstat(p)
			if err != nil {
				note(err)
				continue
			}
			typ = fi.Mode().Type()
		}
		link := typ&fs.ModeSymlink != 0
		if link {
			fi, err := os.Stat(p)
			if err != nil {
				continue // a broken link is no directory
			}
			typ = fi.Mode().Type()
		}
		isDir := typ.IsDir()
		m := Match{Rel: path.Join(rel, name), Path: p, Link: link, ViaLink: viaLink}
		switch {
		case last && isDir:
			visit(m, true)
		case last:
		case isDir:
			visit(m, false)
			walk(p, m.Rel, elems[1:], viaLink || link, firstErr, visit)
		case !listed:
			// A file where the pattern wants a directory: listing it says so.
			_, err := os.ReadDir(p)
			note(err)
		}
	}
}

// AgentOf returns the agent directory that rel (a path relative to the
// hive, `/`-separated) is or lies in: the shortest leading part of rel a
// pattern matches, and the rest of rel below it ("" for the directory
// itself). It looks at names only, never at the disk; find marks a match
// inside another one with Inside, so both agree.
func (s Globs) AgentOf(rel string) (dir, below string, ok bool) {
	parts := split(rel)
	for k := 1; k <= len(parts); k++ {
		if excluded(parts[k-1]) {
			return "", "", false
		}
		if reserved(parts[:k]) {
			continue
		}
		for _, p := range s.patterns() {
			if len(p) == k && matchAll(p, parts[:k]) {
				return strings.Join(parts[:k], "/"), strings.Join(parts[k:], "/"), true
			}
		}
	}
	return "", "", false
}

// Parent reports whether rel (relative to the hive, `/`-separated; "" is
// the hive) is a directory in which agent directories can appear further
// down: the hive, or a directory the leading elements of a pattern match.
func (s Globs) Parent(rel string) bool {
	parts := split(rel)
	if slices.ContainsFunc(parts, excluded) {
		return false
	}
	for _, p := range s.patterns() {
		if len(p) > len(parts) && matchAll(p[:len(parts)], parts) {
			return true
		}
	}
	return false
}

// reserved reports whether the directory at parts (relative to the hive)
// is one the default pattern leads through, agents/ itself: it holds
// agent directories and is never one, whatever an extra pattern (say *)
// matches, so a glob never takes the wings of agents/<id> away. packs/
// and what lies in it are reserved too: the hive's Context Packs are no
// agent's memory.
func reserved(parts []string) bool {
	return inPacks(parts) || len(parts) < len(defaultElems) && matchAll(defaultElems[:len(parts)], parts)
}

func split(rel string) []string {
	rel = strings.Trim(path.Clean("/"+rel), "/")
	if rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

func matchAll(elems, names []string) bool {
	for i, e := range elems {
		if ok, _ := filepath.Match(e, names[i]); !ok {
			return false
		}
	}
	return true
}

// excluded reports whether a directory name is never an agent nor leads
// to one: hidden, or a Syncthing conflict copy.
func excluded(name string) bool { return IsHidden(name) || IsConflictCopy(name) }

func hasMeta(elem string) bool { return strings.ContainsAny(elem, `*?[\`) }

// ResolveParent returns path with the symlinks of its parent directory
// resolved and its last element kept as named (a link stays a link): the
// form in which an agent directory is named however the hive was reached.
// A parent that cannot be resolved is kept as it is.
func ResolveParent(path string) string { return parentResolver()(path) }

// parentResolver returns ResolveParent resolving each parent once.
func parentResolver() func(path string) string {
	resolved := map[string]string{}
	return func(path string) string {
		dir := filepath.Dir(path)
		r, ok := resolved[dir]
		if !ok {
			r = dir
			if rr, err := filepath.EvalSymlinks(dir); err == nil {
				r = rr
			}
			resolved[dir] = r
		}
		return filepath.Join(r, filepath.Base(path))
	}
}
