// Package githive keeps a hive in a Git repository: it registers
// memminer's merge driver and marks the memory files in .gitattributes
// (Setup, Remove), merges a memory file note by note when Git calls the
// driver (MergeFile), commits memminer's own writes (Repo.Commit) and lists
// the commits that touched a note (Repo.History). It runs the git
// program on this machine and never talks to a remote. The rules are in
// docs/several-machines.md.
package githive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNoGit means the git program is not installed (not on PATH).
var ErrNoGit = errors.New("git is not installed (no git on PATH)")

// ErrNotRepo means a directory is not inside a Git work tree.
var ErrNotRepo = errors.New("not inside a Git work tree")

// Repo is the Git work tree a hive lies in.
type Repo struct {
	// Top is the work tree's top directory, symlinks resolved.
	Top string
}

// Open returns the work tree dir lies in, or an error matching ErrNotRepo
// or ErrNoGit.
func Open(ctx context.Context, dir string) (*Repo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, ErrNoGit
	}
	out, err := git(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotRepo)
	}
	top := strings.TrimSpace(out)
	if r, err := filepath.EvalSymlinks(top); err == nil {
		top = r
	}
	return &Repo{Top: top}, nil
}

// Rel returns path relative to the work tree, `/`-separated, or false
// when it lies outside.
func (r *Repo) Rel(path string) (string, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false
	}
	// The file may not exist: resolve its directory.
	if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(d, filepath.Base(abs))
	}
	rel, err := filepath.Rel(r.Top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// git runs git in dir with the extra environment env and returns its
// standard output; a failure's error carries its standard error.
func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.String(), &Error{Args: args, Msg: msg, Err: err}
	}
	return stdout.String(), nil
}

// Error is a git command that failed.
type Error struct {
	Args []string
	// Msg is what git said on its standard error.
	Msg string
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// exitCode is the exit status of a failed git command, -1 when it did not
// run.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
