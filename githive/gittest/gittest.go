// Package gittest runs real git for tests: it finds the binary (skipping
// the test without it, failing it under CI), keeps each test's git away
// from the user's configuration, and gives author and committer through
// the environment.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/syncthing/sttest"
)

// Require returns the path of git. Without it the test is skipped, or
// fails under CI, with a hint to run .ci/setup-git.sh.
func Require(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("git")
	if err != nil {
		if sttest.InCI() {
			t.Fatalf("git is not installed; run .ci/setup-git.sh")
		}
		t.Skip("git is not installed; run .ci/setup-git.sh")
	}
	return path
}

// Env is the environment that keeps git away from the user's and the
// system's configuration, names the author and committer ("Test",
// test@example.invalid), and makes new repositories' branch "main". home
// is the HOME git sees.
func Env(home string) []string {
	return []string{
		"HOME=" + home,
		"GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig-test"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.invalid",
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=init.defaultBranch", "GIT_CONFIG_VALUE_0=main",
		"GIT_CONFIG_KEY_1=pull.rebase", "GIT_CONFIG_VALUE_1=false",
		"GIT_TERMINAL_PROMPT=0",
	}
}

// Setenv sets Env for the rest of the test, for code that runs git in
// this process.
func Setenv(t testing.TB, home string) {
	t.Helper()
	for _, kv := range Env(home) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Git runs git in dir with env added to this process's environment and
// fails the test when it fails; it returns the output.
func Git(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := Try(dir, env, args...)
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return out
}

// Try runs git like Git and returns its combined output and error.
func Try(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
