package mine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/palace"
)

// readable reports whether path (a file or directory) can be read now.
func readable(path string) bool {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		d, err := os.Open(path)
		if err != nil {
			return false
		}
		defer d.Close()
		_, err = d.ReadDir(1)
		return err == nil || errors.Is(err, io.EOF)
	}
	f, err := hivefile.Open(path)
	if err != nil {
		return false
	}
	_ = f.Close()
	return true
}

// Repaired tells how a damaged wing was rebuilt.
type Repaired struct {
	Wing  string `json:"wing"`
	Cause string `json:"cause"`
	Notes int    `json:"notes"`
	// Saved is false when the palace was read-only: the rebuild lives in
	// memory until a writer mines.
	Saved bool `json:"saved"`
	// Err is why the rebuild failed too; null when it worked.
	Err *string `json:"error"`
}

// Repair rebuilds every wing p.Damaged reports from its markdown: the
// roots it was mined from, else the source files the manifest lists.
// In a read-only palace the rebuild is made in memory only.
func Repair(ctx context.Context, p *palace.Palace, opts Options) []Repaired {
	var out []Repaired
	for _, d := range p.Damaged() {
		r := Repaired{Wing: d.Wing, Cause: d.Err.Error()}
		var failed string // why the rebuild failed
		paths := d.Roots
		if len(paths) == 0 {
			paths = d.Sources
		}
		o := opts
		o.Wing, o.Agent, o.DryRun, o.repairing = d.Wing, "", false, true
		reachable := 0
		for _, path := range paths {
			if !readable(path) {
				continue // a root that is gone or unreadable has nothing to rebuild from
			}
			reachable++
			s, err := minePath(ctx, p, path, o)
			r.Notes += s.NotesAdded + s.NotesUnchanged
			if err != nil {
				failed = err.Error()
				break
			}
		}
		switch {
		case failed != "":
		case len(paths) == 0:
			failed = fmt.Sprintf("no markdown sources recorded for wing %s; mine its directory to rebuild it", d.Wing)
		case reachable == 0:
			// Never replace the wing with nothing because its markdown is
			// out of reach (an unmounted disk, a moved hive).
			failed = fmt.Sprintf("its markdown (%s) is not reachable; it stays as it is until that comes back or its directory is mined", strings.Join(paths, ", "))
		}
		if failed == "" {
			p.ClearDamage(d.Wing)
			if p.Writable() {
				if err := p.Flush(); err != nil {
					failed = err.Error()
				} else {
					r.Saved = true
				}
			}
		}
		if failed != "" {
			r.Err = &failed
		}
		out = append(out, r)
	}
	return out
}

// coversDamage reports whether mining job j rebuilt a damaged wing whole:
// j's root is every root the manifest recorded for it (or none was
// recorded), and j read its root.
func coversDamage(p *palace.Palace, j job) bool {
	for _, d := range p.Damaged() {
		if d.Wing != j.wing {
			continue
		}
		for _, r := range d.Roots {
			if r != j.root {
				return false
			}
		}
		for _, pr := range j.problems {
			if pr.Path == j.root {
				return false
			}
		}
		return true
	}
	return false
}
