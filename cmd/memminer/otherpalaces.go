package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memminer/memminer/daemon/registry"
	"github.com/memminer/memminer/internal/quote"
)

// otherPalacesTimeout bounds reading the registry of running daemons and
// checking that each answers, so a note never holds a command up.
const otherPalacesTimeout = 2 * time.Second

// nothingFoundError marks an error that means the palace the command
// opened holds nothing it was asked for (no notes yet, no such wing):
// run then names the palaces that other running daemons serve, since the
// command may have opened the wrong one. It matches what it wraps.
type nothingFoundError struct{ err error }

func (e *nothingFoundError) Error() string { return e.err.Error() }
func (e *nothingFoundError) Unwrap() error { return e.err }

// nothingFound marks err as a nothingFoundError.
func nothingFound(err error) error { return &nothingFoundError{err: err} }

// emptyPalaceError is the answer of a command that reads notes (search,
// wake-up) on a palace that has none yet.
type emptyPalaceError struct{ palace string }

func (e *emptyPalaceError) Error() string {
	return fmt.Sprintf("the palace at %s has no notes yet; start by mining the hive: memminer mine path/to/hive (or one agent: memminer mine hive/agents/<id>)", e.palace)
}

// emptyPalace is the nothingFound error of a command that found the
// palace it opened without notes.
func (a *app) emptyPalace() error { return nothingFound(&emptyPalaceError{palace: a.cfg.Palace}) }

// otherPalacesNote is the line that names the palaces other than the
// command's that running daemons serve, with the flag that opens one, or
// "" when there are none. With a hive configured, only daemons mining
// that hive count: a daemon of another hive is no palace the command
// meant. It depends only on the registry, never on whether a daemon
// serves the command's own palace, so a command says the same with and
// without one.
func (a *app) otherPalacesNote(ctx context.Context) string {
	if a.cfg.Palace == "" || ctx.Err() != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, otherPalacesTimeout)
	defer cancel()
	recs, err := a.runningDaemons(ctx)
	if err != nil {
		return ""
	}
	hive := a.cfg.Hive
	if a.hiveFromDaemon {
		hive = "" // the hive of a daemon serving the palace is no one's choice
	}
	var others []registry.Record
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[r.Palace] || namesOneFile(r.Palace, a.cfg.Palace) || (hive != "" && !namesOneFile(r.Hive, hive)) {
			continue
		}
		seen[r.Palace] = true
		others = append(others, r)
	}
	switch len(others) {
	case 0:
		return ""
	case 1:
		r := others[0]
		return fmt.Sprintf("memminer: note: a running daemon (pid %d) serves palace %s, not %s; pass --palace %s to use it",
			r.PID, quote.Line(r.Palace), quote.Line(a.cfg.Palace), quote.Line(shellQuote(r.Palace)))
	}
	list := make([]string, len(others))
	for i, r := range others {
		list[i] = fmt.Sprintf("%s (pid %d)", quote.Line(r.Palace), r.PID)
	}
	return fmt.Sprintf("memminer: note: running daemons serve other palaces than %s: %s; pass --palace DIR to use one",
		quote.Line(a.cfg.Palace), strings.Join(list, ", "))
}

// namesOneFile reports whether two paths (palaces, hives) name one file: the
// same path, or the same file reached another way (a symlink), as
// os.SameFile tells; a path not there is only ever the same path.
func namesOneFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}

// runningDaemons lists the registry of running daemons. A registry
// directory that is not the user's alone is ignored, and the command
// says so once: its records could be another user's inventions.
func (a *app) runningDaemons(ctx context.Context) ([]registry.Record, error) {
	recs, err := registry.List(ctx, registry.Dir(a.getenv))
	if errors.Is(err, registry.ErrUnsafeDir) {
		a.registryOnce.Do(func() { fmt.Fprintf(a.stderr, "memminer: warning: %s\n", quote.Line(err.Error())) })
	}
	return recs, err
}
