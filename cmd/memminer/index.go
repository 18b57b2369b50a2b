package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/recall/catalog"
)

func (a *app) indexCmd() *cobra.Command {
	var asJSON, write bool
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Print the hive's catalog: wings, files, headings, notes, hashes",
		Long: `Print the hive's catalog, the hub an agent reads first when it does not
search: per wing its identity line, then each mined memory file with its
headings, the notes under each, when it last changed and its hash (the
hash remember --expect-hash takes). It describes the palace as last
mined; the daemon keeps that current.

--json prints metadata only, no note text: cheap for an agent to read.
--write writes it to HIVE/INDEX.md instead, atomically, marked as
generated, with links relative to the hive, and only when its content
changed (so Syncthing has nothing to copy otherwise). The daemon keeps
INDEX.md current itself when run with --index (config index: true).
INDEX.md is never mined: it lies outside every agent directory. More:
docs/remember.md ("index").`,
		Example: `  memminer index
  memminer index --json
  memminer index --write --hive ~/hive`,
		Args: exactArgs(0, "index takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if write && asJSON {
				return usagef("index takes --json or --write, not both")
			}
			if write && a.cfg.Hive == "" {
				return usagef("index --write needs the hive: pass --hive DIR, set MEMMINER_HIVE, or put hive: in the config file")
			}
			ctx := cmd.Context()
			x, err := a.buildIndex(ctx)
			if err != nil {
				return err
			}
			a.foundNothing = len(x.Wings) == 0
			switch {
			case write:
				wrote, err := catalog.Write(ctx, a.cfg.Hive, x)
				if err != nil {
					return err
				}
				path := displayPath(filepath.Join(a.cfg.Hive, catalog.FileName))
				if wrote {
					fmt.Fprintf(a.stdout, "wrote %s\n", path)
				} else {
					fmt.Fprintf(a.stdout, "%s is current\n", path)
				}
				return nil
			case asJSON:
				return writeJSON(a.stdout, x)
			}
			_, err = fmt.Fprint(a.stdout, x.Markdown())
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the catalog as JSON (metadata only)")
	f.BoolVar(&write, "write", false, "write HIVE/INDEX.md, when its content changed")
	settingFlags(f, "hive")
	return cmd
}

// buildIndex asks the daemon for the catalog, or builds it from the palace
// when none serves it. Files are named by the configured hive either way.
func (a *app) buildIndex(ctx context.Context) (catalog.Index, error) {
	x, err := a.service().Index(ctx)
	if err != nil {
		return catalog.Index{}, err
	}
	for _, w := range x.Wings {
		for i := range w.Files {
			w.Files[i].Source = a.sourceName(w.Files[i].Path)
		}
	}
	return x, nil
}
