package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/catalog"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/inproc"
)

// service is the one place the CLI decides between the daemon and the
// palace: with --no-daemon the palace in this process, otherwise the
// daemon serving it, falling back to the palace by fallback's rules. Every
// path re-mines the files a merge wrote (minedMerges).
func (a *app) service() api.Service {
	loc := &localService{Service: inproc.New(a.localOptions()), a: a}
	if a.noDaemon {
		return minedMerges{loc, a}
	}
	return minedMerges{&fallback{daemon: a.client(), local: loc, a: a}, a}
}

// localOptions are the CLI's settings and reporting for package inproc.
func (a *app) localOptions() inproc.Options {
	hive := a.cfg.Hive
	if abs, err := filepath.Abs(hive); err == nil && hive != "" {
		hive = abs
	}
	return inproc.Options{
		Dir:         a.cfg.Palace,
		LockTimeout: a.cfg.LockTimeout,
		Logger:      a.log,
		Hive:        hive,
		Agents:      a.cfg.Agents,
		Domains:     a.domainAssignments(),
		ModelSpec:   a.cfg.Model,
		Enabled:     a.cfg.Enabled,
		Embedder: func(ctx context.Context) (embed.Embedder, error) {
			e, _, err := a.embedder(ctx)
			return e, err
		},
		StatusModel: func(ctx context.Context) (embed.Embedder, string, error) {
			e, ms, err := a.statusEmbedder(ctx)
			return e, ms.Reason, err
		},
		MineOptions:  a.mineOptions,
		Repaired:     a.reportRepairs,
		Warn:         func(msg string) { fmt.Fprintf(a.stderr, "memminer: %s\n", msg) },
		Isolation:    a.isolation,
		MineProgress: a.mineProgress,
	}
}

// isolation is whether this machine is cut off from the others, as the
// Syncthing the settings name says; nil when none is asked.
func (a *app) isolation(ctx context.Context) *wakeup.Isolation {
	client, _, err := a.syncthingClient(nil)
	if err != nil || client == nil {
		return nil
	}
	return daemon.WakeupIsolation(daemon.HiveReplication(ctx, client, a.cfg.Hive))
}

// fallback is the daemon's service with the rules for a daemon that does
// not serve the call (docs/daemon.md, "Daemon or not"): every call goes to
// the palace here when no daemon answers (api.ErrNotRunning: none runs, it
// is stopping, it did not begin to answer a read in time, or the
// connection broke on a call that can be repeated), and a search also
// when the daemon serves another model.
type fallback struct {
	daemon, local api.Service
	a             *app
}

// gone reports whether err says that no daemon serves the call.
func gone(err error) bool { return errors.Is(err, api.ErrNotRunning) }

// Search falls back on another model too: that daemon's ranking is not
// the one the caller's model gives.
func (f *fallback) Search(ctx context.Context, req api.SearchRequest) (api.SearchResult, error) {
	out, err := f.daemon.Search(ctx, req)
	if errors.Is(err, api.ErrOtherModel) {
		out, lerr := f.local.Search(ctx, req)
		if lerr != nil {
			return out, &fellBackError{err: lerr, refusal: err}
		}
		return out, nil
	}
	if gone(err) {
		return f.local.Search(ctx, req)
	}
	return out, err
}

// fellBackError is the error of a call made here after the daemon
// refused it (Refusal): advice then names both.
type fellBackError struct {
	err, refusal error
}

func (e *fellBackError) Error() string { return e.err.Error() }

func (e *fellBackError) Unwrap() error { return e.err }

// WakeUp falls back when no daemon answers.
func (f *fallback) WakeUp(ctx context.Context, opts wakeup.Options) (wakeup.Digest, error) {
	if d, err := f.daemon.WakeUp(ctx, opts); !gone(err) {
		return d, err
	}
	return f.local.WakeUp(ctx, opts)
}

// Remember falls back when no daemon answers. A daemon that died
// answering may have written the note: the write here then finds it
// instead of writing it twice (docs/remember.md). A daemon starting (a
// restart) takes the palace's lock before it serves: the write here,
// which waited lock_timeout for that lock and wrote nothing, is then
// sent to the daemon once more, which serves by then.
func (f *fallback) Remember(ctx context.Context, req api.RememberRequest) (remember.Result, error) {
	res, err := f.daemon.Remember(ctx, req)
	if !gone(err) {
		return res, err
	}
	req.Retry = req.Retry || errors.Is(err, api.ErrConnectionLost)
	res, err = f.local.Remember(ctx, req)
	if errors.Is(err, palace.ErrLocked) {
		if dres, derr := f.daemon.Remember(ctx, req); !gone(derr) {
			return dres, derr
		}
	}
	return res, err
}

// Forget falls back when no daemon runs.
func (f *fallback) Forget(ctx context.Context, req api.ForgetRequest) (mine.Forgotten, error) {
	if out, err := f.daemon.Forget(ctx, req); !gone(err) {
		return out, err
	}
	return f.local.Forget(ctx, req)
}

// Mine falls back when no daemon runs; a daemon of another model or
// another hive refuses, and that stands: it holds the palace's writer
// lock, so there is no mining here beside it.
func (f *fallback) Mine(ctx context.Context, req api.MineRequest) (api.MineReply, error) {
	if rep, err := f.daemon.Mine(ctx, req); !gone(err) {
		return rep, err
	}
	return f.local.Mine(ctx, req)
}

// Index falls back when no daemon answers.
func (f *fallback) Index(ctx context.Context) (catalog.Index, error) {
	if x, err := f.daemon.Index(ctx); !gone(err) {
		return x, err
	}
	return f.local.Index(ctx)
}

// Status falls back when no daemon answers.
func (f *fallback) Status(ctx context.Context) (api.Status, error) {
	if st, err := f.daemon.Status(ctx); !gone(err) {
		return st, err
	}
	return f.local.Status(ctx)
}

// Conflicts falls back when no daemon answers.
func (f *fallback) Conflicts(ctx context.Context, req api.ConflictsRequest) (conflicts.List, error) {
	if l, err := f.daemon.Conflicts(ctx, req); !gone(err) {
		return l, err
	}
	return f.local.Conflicts(ctx, req)
}

// MergeConflicts falls back when no daemon runs.
func (f *fallback) MergeConflicts(ctx context.Context, req conflicts.MergeRequest) (conflicts.MergeReport, error) {
	if rep, err := f.daemon.MergeConflicts(ctx, req); !gone(err) {
		return rep, err
	}
	return f.local.MergeConflicts(ctx, req)
}

// Show falls back when no daemon answers.
func (f *fallback) Show(ctx context.Context, req api.ShowRequest) (api.ShownNote, error) {
	if n, err := f.daemon.Show(ctx, req); !gone(err) {
		return n, err
	}
	return f.local.Show(ctx, req)
}

// Inbox falls back when no daemon answers.
func (f *fallback) Inbox(ctx context.Context, req api.InboxRequest) ([]inbox.Item, error) {
	if items, err := f.daemon.Inbox(ctx, req); !gone(err) {
		return items, err
	}
	return f.local.Inbox(ctx, req)
}

// Decide falls back when no daemon runs.
func (f *fallback) Decide(ctx context.Context, req api.DecideRequest) (api.Decision, error) {
	if d, err := f.daemon.Decide(ctx, req); !gone(err) {
		return d, err
	}
	return f.local.Decide(ctx, req)
}

// Wings falls back when no daemon answers.
func (f *fallback) Wings(ctx context.Context) ([]palace.WingInfo, error) {
	if ws, err := f.daemon.Wings(ctx); !gone(err) {
		return ws, err
	}
	return f.local.Wings(ctx)
}

// localService is package inproc's service with what the CLI adds without
// a daemon: Syncthing in status, and the refusal of a mine beside a
// running daemon under --no-daemon.
type localService struct {
	*inproc.Service
	a *app
}

// Mine mines here. Under --no-daemon a running daemon holds the palace's
// lock for as long as it runs: say so now rather than after the lock
// timeout.
func (l *localService) Mine(ctx context.Context, req api.MineRequest) (api.MineReply, error) {
	a := l.a
	if a.noDaemon && !req.DryRun && a.daemonServes(ctx) {
		return api.MineReply{}, fmt.Errorf("the palace at %s is held by the running daemon: stop it (memminer stop, or Ctrl-C its run) to mine with --no-daemon, or mine without --no-daemon to hand it the mine", a.cfg.Palace)
	}
	return l.Service.Mine(ctx, req)
}

// Status is the palace's status, with the Syncthing the settings name
// (status has no Syncthing flags: the config file and environment say)
// and whether a daemon serves the palace, asked only under --no-daemon:
// otherwise it was just asked.
func (l *localService) Status(ctx context.Context) (api.Status, error) {
	a := l.a
	st, err := l.Service.Status(ctx)
	if err != nil {
		return st, err
	}
	st.Active = a.noDaemon && a.daemonServes(ctx)
	client, s, err := a.syncthingClient(nil)
	if err != nil {
		return st, err
	}
	st.Syncthing = daemon.HiveReplication(ctx, client, a.cfg.Hive)
	if client == nil && s.Off != "" {
		st.Syncthing = api.ReplicationOff(s.Off)
	}
	return st, nil
}

// minedMerges re-mines each file a merge wrote, through the service that
// merged, before the merge returns: the merged notes are in the next
// search on every path, as a remembered note is.
type minedMerges struct {
	api.Service
	a *app
}

// MergeConflicts merges, then mines the directories of the files written.
// A mine that fails leaves the merge written; it is said on stderr and the
// next mine picks the file up.
func (m minedMerges) MergeConflicts(ctx context.Context, req conflicts.MergeRequest) (conflicts.MergeReport, error) {
	rep, err := m.Service.MergeConflicts(ctx, req)
	if err != nil || !req.Apply {
		return rep, err
	}
	type place struct{ dir, wing string }
	var mined []place
	for _, cm := range rep.Merges {
		pl := place{filepath.Dir(cm.Original), cm.Wing}
		if !cm.Applied || cm.Wing == "" || slices.Contains(mined, pl) {
			continue
		}
		mined = append(mined, pl)
		_, merr := m.Service.Mine(ctx, api.MineRequest{Path: pl.dir, Wing: pl.wing, Model: m.a.cfg.Model, Agents: m.a.cfg.Agents})
		if merr != nil {
			fmt.Fprintf(m.a.stderr, "memminer: merged %s, but mining it failed: %v; the next mine picks it up\n", displayPath(cm.Original), merr)
		}
	}
	return rep, nil
}
