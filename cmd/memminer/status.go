package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/bytesize"
	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
)

func (a *app) statusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show if memminer is available, enabled, active, initialized",
		Long: `Show the palace's state: the four booleans scripts check, and one line per wing.

  available    the configured embedding backend is usable now
  enabled      memminer is switched on (config "enabled")
  active       a daemon serves this palace
  initialized  the palace exists and has at least one wing

When the local Syncthing answers, status also shows the folder holding the
hive: in sync or not (and since when), files and bytes still needed, and
which other devices are connected; "syncthing": null in --json when it does
not answer. Last, the agents memminer connect wired in, with their wing and
files. Details: docs/search.md, docs/several-machines.md and docs/connect.md.`,
		Args: exactArgs(0, "status takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.status(cmd.Context())
			if err != nil {
				return err
			}
			a.attention(&st)
			a.foundNothing = len(st.Wings) == 0
			agents := a.connectedAgents()
			if asJSON {
				return writeJSON(a.stdout, statusOutput{Status: st, Agents: agents})
			}
			printStatus(a.stdout, st)
			printAgents(a.stdout, agents)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print status as JSON")
	settingFlags(cmd.Flags(), "hive") // its packs and its Syncthing folder
	return cmd
}

// status describes the palace as the status command does: the daemon's
// answer when one serves it, otherwise what the palace itself holds and
// what the Syncthing the settings name says of the hive's folder.
func (a *app) status(ctx context.Context) (api.Status, error) {
	st, err := a.service().Status(ctx)
	if err == nil && st.Daemon != nil && st.Model != a.cfg.Model {
		// The daemon's model is the one the palace is served with;
		// say so rather than report another silently.
		fmt.Fprintf(a.stderr, "memminer: the daemon (pid %d) serving this palace uses model %s, not %s; this is its status (--no-daemon for this command's model)\n",
			st.Daemon.PID, st.Model, a.cfg.Model)
	}
	return st, err
}

func printStatus(w io.Writer, st api.Status) {
	model := st.Model
	if st.ModelError != nil {
		model += " (unavailable: " + *st.ModelError + ")"
	}
	fmt.Fprintf(w, "available:   %t\nenabled:     %t\nactive:      %t\ninitialized: %t\n", st.Available, st.Enabled, st.Active, st.Initialized)
	fmt.Fprintf(w, "model:       %s\npalace:      %s (%s)\nconflicts:   %d open%s\n", quote.Line(model), quote.Line(st.Palace), bytesize.Format(st.PalaceBytes), st.ConflictsOpen, autoMergeNote(st.Daemon))
	printReplication(w, st.Syncthing)
	if st.InboxPending > 0 {
		fmt.Fprintf(w, "inbox:       %d %s for approval (memminer inbox)\n", st.InboxPending, plural(st.InboxPending, "note waits", "notes wait"))
	}
	if st.SecretsHidden > 0 {
		fmt.Fprintf(w, "secrets:     %d hidden in memory files, shown nowhere (memminer doctor names them; remove them from the files)\n", st.SecretsHidden)
	}
	if len(st.PacksReviewNeeded) > 0 {
		fmt.Fprintf(w, "packs:       review needed: %s (memminer pack --list)\n", strings.Join(st.PacksReviewNeeded, ", "))
	}
	printWings(w, st)
	if st.Daemon != nil {
		printDaemon(w, st.Daemon)
	}
}

// printWings prints the palace's wings as a table.
func printWings(w io.Writer, st api.Status) {
	if len(st.Wings) == 0 {
		if st.Daemon != nil && st.Daemon.FirstMine != nil {
			fmt.Fprintln(w, "wings:       none yet; the daemon is mining the hive (first mine, below)")
			return
		}
		if st.Daemon != nil {
			// The daemon mines by itself: what is missing is memory.
			fmt.Fprintf(w, "wings:       none yet; the daemon mines each agents/<id>/ of the hive %s as it appears: have an agent write (memminer remember --wing ID TEXT)\n", quote.Line(st.Daemon.Hive))
			return
		}
		fmt.Fprintln(w, "wings:       none yet; start the daemon, which mines the hive and keeps it mined (memminer run, or memminer install --user), or mine once: memminer mine HIVE")
		return
	}
	fmt.Fprintf(w, "wings:       %d (%d notes)\n", len(st.Wings), st.Notes)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// Wings are grouped by domain once a hive has domains (docs/domains.md).
	wings, domains := byDomain(st.Wings)
	if domains {
		fmt.Fprintln(tw, "  DOMAIN\tWING\tNOTES\tSOURCES\tMODEL\tLAST MINED")
	} else {
		fmt.Fprintln(tw, "  WING\tNOTES\tSOURCES\tMODEL\tLAST MINED")
	}
	for _, w := range wings {
		last := "never"
		if !w.LastMined.IsZero() {
			last = w.LastMined.UTC().Format(time.RFC3339)
		}
		orphan := ""
		if w.Orphaned {
			orphan = "  (orphaned: its markdown is gone; the wing is kept)"
		}
		domain := ""
		if domains {
			domain = quote.Line(w.Domain) + "\t"
		}
		fmt.Fprintf(tw, "  %s%s\t%d\t%d\t%s\t%s%s\n", domain, quote.Line(w.ID), w.Notes, w.Sources, quote.Line(w.Model), last, orphan)
	}
	tw.Flush()
}

// byDomain orders wings by domain, global first, and reports whether any
// wing is in a domain other than global.
func byDomain(wings []api.WingStatus) ([]api.WingStatus, bool) {
	if !slices.ContainsFunc(wings, func(w api.WingStatus) bool { return w.Domain != hive.GlobalDomain && w.Domain != "" }) {
		return wings, false
	}
	rank := func(w api.WingStatus) string {
		if w.Domain == hive.GlobalDomain {
			return ""
		}
		return w.Domain
	}
	out := slices.Clone(wings)
	slices.SortStableFunc(out, func(a, b api.WingStatus) int { return strings.Compare(rank(a), rank(b)) })
	return out, true
}

// printReplication prints the hive's Syncthing folder: whether the hive
// here is behind the other machines.
func printReplication(w io.Writer, r *api.Replication) {
	switch {
	case r == nil:
		fmt.Fprintln(w, "syncthing:   not reachable (or no hive configured): replication unknown")
		return
	case r.Error != nil:
		fmt.Fprintf(w, "syncthing:   %s\n", quote.Line(*r.Error))
		return
	}
	name := r.Folder
	if r.Label != "" && r.Label != r.Folder {
		name = fmt.Sprintf("%s (%s)", r.Label, r.Folder)
	}
	name = quote.Line(name) // the folder's label is anyone's text
	state := fmt.Sprintf("%s since %s", r.State, r.StateChanged.UTC().Format(time.RFC3339))
	switch {
	case !r.StateKnown && r.IsolatedSince != nil:
		// Nothing needed only means nothing this machine has heard of.
		fmt.Fprintf(w, "syncthing:   folder %s: state unknown, isolated for %s (no other device connected since %s); this machine's memory may be behind\n",
			name, wakeup.Isolation{Seconds: *r.IsolatedSeconds}.For(), r.IsolatedSince.UTC().Format(time.RFC3339))
	default:
		if r.InSync {
			state = "in sync since " + r.InSyncSince.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "syncthing:   folder %s %s; %d %s (%s) still needed", name, state, r.NeedFiles, plural(r.NeedFiles, "file", "files"), bytesize.Format(r.NeedBytes))
		if r.Errors > 0 {
			fmt.Fprintf(w, "; %d %s failing", r.Errors, plural(r.Errors, "item", "items"))
		}
		fmt.Fprintln(w)
	}
	var names []string
	for _, d := range r.Devices {
		n := quote.Line(d.Name)
		switch {
		case !d.Connected && d.LastSeen != nil:
			n += " (not connected; last seen " + d.LastSeen.UTC().Format(time.RFC3339) + ")"
		case !d.Connected:
			n += " (not connected; never seen)"
		case d.Completion != nil && *d.Completion < 100:
			n += fmt.Sprintf(" (%.0f%% synced)", *d.Completion)
		}
		names = append(names, n)
	}
	devices := "shared with no other device"
	if len(names) > 0 {
		devices = strings.Join(names, ", ")
	}
	fmt.Fprintf(w, "devices:     %d of %d connected: %s\n", r.DevicesConnected, len(r.Devices), devices)
}

// autoMergeNote says what the daemon's automatic merge is doing with the
// open conflicts: how many it retries, how many need a person.
func autoMergeNote(d *api.DaemonInfo) string {
	if d == nil || d.Components[conflicts.Name] == nil {
		return ""
	}
	raw, err := json.Marshal(d.Components[conflicts.Name])
	var st conflicts.Status
	if err != nil || json.Unmarshal(raw, &st) != nil || !st.AutoMerge.Enabled {
		return ""
	}
	var parts []string
	if n := st.AutoMerge.Retrying; n > 0 {
		parts = append(parts, fmt.Sprintf("%d being merged again automatically", n))
	}
	if n := st.AutoMerge.NeedsPerson; n > 0 {
		parts = append(parts, fmt.Sprintf("%d %s a person (memminer conflicts merge)", n, plural(n, "needs", "need")))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// printDaemon prints what a running daemon adds to status.
func printDaemon(w io.Writer, d *api.DaemonInfo) {
	up := time.Duration(d.UptimeSeconds * float64(time.Second)).Round(time.Second)
	fmt.Fprintf(w, "daemon:      pid %d, up %s, hive %s\n", d.PID, up, quote.Line(d.Hive))
	fmt.Fprintf(w, "watching:    %s; mine loop every %s\n", quote.Line(d.Watch), d.MineInterval)
	last := "never"
	if !d.LastScan.IsZero() {
		last = d.LastScan.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(w, "last scan:   %s (%d scans, %d mines)\n", last, d.Scans, d.Mines)
	var pending []string
	if d.Working != nil {
		pending = append(pending, quote.Line(*d.Working))
	}
	if n := len(d.Pending.Wings); n > 0 {
		pending = append(pending, fmt.Sprintf("%d %s queued (%s)", n, plural(n, "wing", "wings"), quote.Line(strings.Join(d.Pending.Wings, ", "))))
	}
	if n := d.Pending.Requests; n > 0 {
		pending = append(pending, fmt.Sprintf("%d %s", n, plural(n, "mine request", "mine requests")))
	}
	if len(pending) == 0 {
		pending = []string{"none"}
	}
	fmt.Fprintf(w, "pending:     %s\n", strings.Join(pending, "; "))
	if line := firstMineLine(d.FirstMine); line != "" {
		fmt.Fprintf(w, "first mine:  %s\n", line)
	}
	if d.Metrics != nil {
		fmt.Fprintf(w, "metrics:     http://%s/metrics\n", quote.Line(*d.Metrics))
	}
	if len(d.Errors) == 0 {
		fmt.Fprintln(w, "errors:      none")
		return
	}
	fmt.Fprintf(w, "errors:      %d\n", len(d.Errors))
	for _, e := range d.Errors {
		retry := ""
		if !e.NextRetry.IsZero() {
			retry = ", retried when it changes or at " + e.NextRetry.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "  %s: %s (failed %d %s%s)\n", quote.Line(displayPath(e.Path)), quote.Line(e.Error), e.Failures, plural(e.Failures, "time", "times"), retry)
	}
}

// firstMineLine says how far the daemon's first mine got: "in progress:
// N of M files, about T left"; "" when it is over.
func firstMineLine(p *api.MineProgress) string {
	if p == nil {
		return ""
	}
	if p.FilesTotal == 0 {
		return "in progress: scanning the hive"
	}
	line := fmt.Sprintf("in progress: %d of %d %s", p.FilesDone, p.FilesTotal, plural(p.FilesTotal, "file", "files"))
	if p.ETASeconds != nil {
		line += fmt.Sprintf(", about %s left", (time.Duration(*p.ETASeconds) * time.Second).Round(time.Second))
	}
	return line
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// attention fills in the packs that need review, read from the hive, the
// same with and without a daemon (BuildStatus counts the inbox).
func (a *app) attention(st *api.Status) {
	st.PacksReviewNeeded = []string{}
	for _, r := range a.packsToReview() {
		st.PacksReviewNeeded = append(st.PacksReviewNeeded, r.Name)
	}
}
