package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/embed/uselite"
)

// versionInfo is what memminer version reports; the JSON keys are stable.
type versionInfo struct {
	Version  string `json:"version"`
	Revision string `json:"revision"` // "" when not built from a checkout; so is Date
	Date     string `json:"date"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
	Model    string `json:"model"`
	// Source says where version and revision came from: "module" (go
	// install module@version), "vcs" (the toolchain's VCS stamp), "ldflags"
	// (scripts/install and scripts/example, for builds without a VCS stamp)
	// or "none".
	Source string `json:"source"`
}

// Set with -ldflags "-X main.stampVersion=… -X main.stampRevision=…" by
// scripts/build-flags, for builds where the toolchain stamps no VCS data
// (GOFLAGS=-buildvcs=false, a tarball): git describe, the commit, its date.
var (
	stampVersion  string
	stampRevision string
	stampDate     string
	stampModified string
)

// buildVersion reads the version from the build info the Go toolchain
// embeds: the module version when built by "go install module@version",
// "devel" otherwise, and the VCS revision when built from a checkout.
// A stamp from -ldflags fills in what the build info lacks.
func buildVersion(bi *debug.BuildInfo, ok bool, st stamp) versionInfo {
	v := versionInfo{Version: "devel", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Model: uselite.ModelID, Source: "none"}
	if ok && bi != nil {
		if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
			v.Version = mv
			v.Source = "module"
		}
		if bi.GoVersion != "" {
			v.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
				v.Source = "vcs"
			case "vcs.time":
				v.Date = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Revision == "" && st.revision != "" {
		v.Revision, v.Date, v.Modified = st.revision, st.date, st.modified
		if v.Version == "devel" && st.version != "" {
			v.Version = st.version
		}
		v.Source = "ldflags"
	}
	return v
}

// stamp is what -ldflags set at build time.
type stamp struct {
	version, revision, date string
	modified                bool
}

func currentVersion() versionInfo {
	bi, ok := debug.ReadBuildInfo()
	return buildVersion(bi, ok, stamp{stampVersion, stampRevision, stampDate, stampModified == "true"})
}

// sourceText says in words where version's figures came from.
var sourceText = map[string]string{
	"module":  "module version (go install module@version)",
	"vcs":     "the Go toolchain's VCS stamp",
	"ldflags": "-ldflags at build time (scripts/build-flags)",
	"none":    "no version stamp: build with scripts/install to record the revision",
}

func (v versionInfo) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "memminer %s\n", v.Version)
	if v.Revision != "" {
		rev := v.Revision
		if v.Modified {
			rev += " (modified)"
		}
		fmt.Fprintf(&b, "revision  %s\n", rev)
	}
	if v.Date != "" {
		fmt.Fprintf(&b, "date      %s\n", v.Date)
	}
	fmt.Fprintf(&b, "go        %s %s\n", v.Go, v.Platform)
	fmt.Fprintf(&b, "model     %s (built-in)\n", v.Model)
	fmt.Fprintf(&b, "source    %s\n", sourceText[v.Source])
	_, err := io.WriteString(w, b.String())
	return err
}

func (a *app) versionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, revision, Go version and built-in model",
		Long: `Print memminer's version (the module version, or "devel" for a build from a
checkout), the VCS revision and commit date it was built from, the Go
version and platform, and the id of the built-in embedding model.
memminer --version prints the same.`,
		Example: `  memminer version
  memminer version --json`,
		Args: exactArgs(0, "version takes no arguments"),
		// The version needs no configuration: a broken config file must not hide it.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(*cobra.Command, []string) error {
			v := currentVersion()
			if asJSON {
				return writeJSON(a.stdout, v)
			}
			return v.writeText(a.stdout)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the version as one JSON object")
	return cmd
}

// setVersionFlag makes memminer --version print what memminer version
// does. cobra prints its version template, before any configuration is
// read, when root.Version is set; the text is built only then.
func (a *app) setVersionFlag(root *cobra.Command) {
	root.Version = "-"
	root.Flags().Bool("version", false, "print the version (same as memminer version)")
	versionTemplateOnce.Do(func() {
		cobra.AddTemplateFunc("memminerVersion", func() string {
			var b strings.Builder
			_ = currentVersion().writeText(&b)
			return b.String()
		})
	})
	root.SetVersionTemplate("{{memminerVersion}}")
}

// versionTemplateOnce guards cobra's template functions, a global map.
var versionTemplateOnce sync.Once
