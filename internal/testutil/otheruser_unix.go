//go:build unix

package testutil

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// OtherUser is the unprivileged user tests of a trust boundary run as,
// with its uid and gid. It needs root: without root the test is skipped,
// unless CI is set, when it fails (CI must run it).
func OtherUser(t testing.TB) (uid, gid uint32) {
	t.Helper()
	NeedRoot(t, "runs a second user (nobody)")
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("user nobody: %v", err)
	}
	id, err1 := strconv.ParseUint(u.Uid, 10, 32)
	g, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		t.Fatalf("user nobody: uid %q gid %q", u.Uid, u.Gid)
	}
	return uint32(id), uint32(g)
}

// NeedRoot skips the test, saying why it needs root, when it does not
// run as root, unless CI is set: then it fails, since CI must run it.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: needs root, and CI must run it", why)
		}
		t.Skipf("%s: needs root", why)
	}
}

// AsOtherUser makes cmd run as OtherUser, with no supplementary groups.
func AsOtherUser(t testing.TB, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	uid, gid := OtherUser(t)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}
	return cmd
}

// HelperAsOtherUser returns a command that runs the test function named
// helper of the running test binary as OtherUser, with env as its whole
// environment. The binary is copied where that user may run it; the
// helper tells it is the child by an environment variable the caller sets.
func HelperAsOtherUser(t testing.TB, helper string, env ...string) *exec.Cmd {
	t.Helper()
	OtherUser(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := SharedDir(t, 0o755)
	bin := filepath.Join(dir, "test.bin")
	copyExecutable(t, self, bin)
	cmd := exec.Command(bin, "-test.run=^"+helper+"$", "-test.count=1", "-test.v")
	cmd.Env = append([]string{"HOME=" + dir, "PATH=/usr/bin:/bin"}, env...)
	cmd.Dir = dir
	return AsOtherUser(t, cmd)
}

// SharedDir is a new directory with mode perm outside the test's own
// temporary directory (which other users cannot enter), removed when the
// test ends: where the other user may read (0755) or write (0777).
func SharedDir(t testing.TB, perm os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "memminer-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyExecutable(t testing.TB, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// The swap race: another user who owns a directory of the hive swaps a
// file of it between a regular file and a symlink to a file of ours, as
// fast as it can, while memminer reads or appends to it. SwapRace starts
// it; the test binary's helper function (named helper, which must call
// RunSwapper first thing) is the other user's side.

// swapEnv names the environment variables the swapper reads.
const (
	swapFileEnv   = "MEMMINER_SWAP_FILE"
	swapTargetEnv = "MEMMINER_SWAP_TARGET"
	swapTextEnv   = "MEMMINER_SWAP_TEXT"
	swapNameEnv   = "MEMMINER_SWAP_NAME"
)

// SwapRace runs helper as OtherUser, swapping file (in a directory that
// user owns) between a regular file holding text and a symlink to
// target, until the test ends. It returns once the first swap is done.
func SwapRace(t testing.TB, helper, file, target, text string) (stop func()) {
	t.Helper()
	return swapRace(t, helper, swapFileEnv+"="+file, swapTargetEnv+"="+target, swapTextEnv+"="+text)
}

// SwapDirRace is SwapRace for a directory: dir is swapped between a
// directory holding the file name with text and a symlink to target
// (a directory of ours).
func SwapDirRace(t testing.TB, helper, dir, target, name, text string) (stop func()) {
	t.Helper()
	return swapRace(t, helper, swapFileEnv+"="+dir, swapTargetEnv+"="+target, swapTextEnv+"="+text, swapNameEnv+"="+name)
}

func swapRace(t testing.TB, helper string, env ...string) (stop func()) {
	t.Helper()
	cmd := HelperAsOtherUser(t, helper, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			stdin.Close() // the swapper stops at EOF
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)
	// The line "swapping" is the swapper's sign that it is running.
	out := bufio.NewReader(stdout)
	for {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("the other user's swapper did not start: %v", err)
		}
		if line == "swapping\n" {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return stop
}

// RunSwapper is the other user's side of SwapRace: it returns false at
// once when the test is not that side, else swaps until its input ends
// and returns true.
func RunSwapper(t testing.TB) bool {
	file := os.Getenv(swapFileEnv)
	if file == "" {
		return false
	}
	if os.Getuid() == 0 {
		t.Fatal("the swapper runs as root, not as another user")
	}
	stop := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stop)
	}()
	if name := os.Getenv(swapNameEnv); name != "" {
		runDirSwapper(t, file, name, stop)
		return true
	}
	reg, link := file+".swap-reg", file+".swap-link"
	for i := 0; ; i++ {
		select {
		case <-stop:
			return true
		default:
		}
		if err := os.WriteFile(reg, []byte(os.Getenv(swapTextEnv)), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(reg, file); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(link)
		if err := os.Symlink(os.Getenv(swapTargetEnv), link); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(link, file); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			os.Stdout.WriteString("swapping\n")
		}
	}
}

// OtherUsersDir makes rel, with its parents, in a new directory others
// may read, and gives rel to OtherUser: the directory of a shared hive
// another user owns. It returns rel's path.
func OtherUsersDir(t testing.TB, rel string) string {
	t.Helper()
	uid, gid := OtherUser(t)
	dir := filepath.Join(SharedDir(t, 0o755), rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	return dir
}
