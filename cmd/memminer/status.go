package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/palace"
)

func (a *app) statusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether memminer is available, enabled, active and initialized",
		Long: `Show the palace's state: the four booleans scripts check, and one line per wing.

  available    the configured embedding backend is usable now
  enabled      memminer is switched on (config "enabled")
  active       a daemon serves this palace
  initialized  the palace exists and has at least one wing`,
		Args: exactArgs(0, "status takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			e, ms, err := a.embedder(ctx)
			if err != nil {
				return err
			}
			p, err := a.openPalace(ctx, e, false, nil)
			if err != nil {
				return err
			}
			defer p.Close()
			st := statusJSON{
				Available:   ms.Available,
				Enabled:     a.cfg.Enabled,
				Active:      false,
				Model:       ms.Spec,
				ModelError:  ms.Reason,
				Palace:      a.cfg.Palace,
				PalaceBytes: p.Bytes(),
				Wings:       p.Wings(),
			}
			st.Initialized = len(st.Wings) > 0
			for _, w := range st.Wings {
				st.Notes += w.Notes
			}
			if asJSON {
				return writeJSON(a.stdout, st)
			}
			printStatus(a, st)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print status as JSON")
	return cmd
}

// statusJSON is the shape of `status --json`.
type statusJSON struct {
	Available     bool              `json:"available"`
	Enabled       bool              `json:"enabled"`
	Active        bool              `json:"active"`
	Initialized   bool              `json:"initialized"`
	Model         string            `json:"model"`
	ModelError    string            `json:"model_error,omitempty"`
	Palace        string            `json:"palace"`
	PalaceBytes   int64             `json:"palace_bytes"`
	Notes         int               `json:"notes"`
	ConflictsOpen int               `json:"conflicts_open"`
	Wings         []palace.WingInfo `json:"wings"`
}

func printStatus(a *app, st statusJSON) {
	model := st.Model
	if st.ModelError != "" {
		model += " (unavailable: " + st.ModelError + ")"
	}
	fmt.Fprintf(a.stdout, "available:   %t\nenabled:     %t\nactive:      %t\ninitialized: %t\n", st.Available, st.Enabled, st.Active, st.Initialized)
	fmt.Fprintf(a.stdout, "model:       %s\npalace:      %s (%s)\nconflicts:   %d open\n", model, st.Palace, humanSize(st.PalaceBytes), st.ConflictsOpen)
	if len(st.Wings) == 0 {
		fmt.Fprintln(a.stdout, "wings:       none yet; mine some memory: memminer mine hive/agents/<id>")
		return
	}
	fmt.Fprintf(a.stdout, "wings:       %d (%d notes)\n", len(st.Wings), st.Notes)
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  WING\tNOTES\tSOURCES\tMODEL\tLAST MINED")
	for _, w := range st.Wings {
		last := "never"
		if !w.LastMined.IsZero() {
			last = w.LastMined.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t%s\n", w.ID, w.Notes, w.Sources, w.Model, last)
	}
	tw.Flush()
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
