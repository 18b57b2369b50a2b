//go:build unix

package registry

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// TestListTrustsOnlyTheUsersDirectory: a registry directory that is not
// the user's alone is not read, whatever it holds, and says why.
func TestListTrustsOnlyTheUsersDirectory(t *testing.T) {
	uid, gid := testutil.OtherUser(t)
	tests := []struct {
		name   string
		make   func(dir string) error
		reason string
	}{
		{"world-writable", func(dir string) error { return os.Chmod(dir, 0o777) }, "mode 0777"},
		{"group-readable", func(dir string) error { return os.Chmod(dir, 0o750) }, "mode 0750"},
		{"another user's", func(dir string) error { return os.Chown(dir, int(uid), int(gid)) }, "owned by uid"},
		{"a link", func(dir string) error {
			real := dir + ".real"
			if err := os.Rename(dir, real); err != nil {
				return err
			}
			return os.Symlink(real, dir)
		}, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "daemons")
			if _, err := Register(dir, Record{PID: os.Getpid(), Palace: "/spoof", Socket: listen(t, tmp, "d.sock")}); err != nil {
				t.Fatal(err)
			}
			if err := tt.make(dir); err != nil {
				t.Fatal(err)
			}
			got, err := List(context.Background(), dir)
			if !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), tt.reason) || got != nil {
				t.Fatalf("List = %v, %v; want ErrUnsafeDir (%s)", got, err, tt.reason)
			}
			if _, err := Register(dir, Record{PID: os.Getpid(), Palace: "/x", Socket: "/x.sock"}); !errors.Is(err, ErrUnsafeDir) {
				t.Fatalf("Register into it: %v", err)
			}
		})
	}
}

// TestListIgnoresOtherUsersDaemons: a record another user wrote, or one
// naming a socket another user serves, is not believed.
func TestListIgnoresOtherUsersDaemons(t *testing.T) {
	if path := os.Getenv("MEMMINER_OTHER_USER_SOCKET"); path != "" {
		serveAsOtherUser(t, path)
		return
	}
	uid, gid := testutil.OtherUser(t)
	shared := testutil.SharedDir(t, 0o777)
	// A daemon of the other user, on a real socket.
	theirs := filepath.Join(shared, "theirs.sock")
	cmd := testutil.HelperAsOtherUser(t, "TestListIgnoresOtherUsersDaemons", "MEMMINER_OTHER_USER_SOCKET="+theirs)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	ready := false
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		if strings.Contains(sc.Text(), "listening") {
			ready = true
			break
		}
	}
	if !ready {
		t.Fatal("the other user's server did not start")
	}

	dir := filepath.Join(t.TempDir(), "daemons")
	mine := listen(t, t.TempDir(), "mine.sock")
	if _, err := Register(dir, Record{PID: os.Getpid(), Palace: "/mine", Socket: mine}); err != nil {
		t.Fatal(err)
	}
	if _, err := Register(dir, Record{PID: cmd.Process.Pid, Palace: "/spoofed", Socket: theirs}); err != nil {
		t.Fatal(err)
	}
	// A record the other user owns, naming a live process and a socket
	// that answers: only its owner gives it away.
	planted := Record{PID: testutil.SleepingProcess(t), Palace: "/planted", Socket: mine}
	if _, err := Register(dir, planted); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(dir, fileName(planted)), int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	got, err := List(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Palace != "/mine" {
		t.Fatalf("List = %+v, want only /mine", got)
	}
}

// serveAsOtherUser runs as the other user: it serves a unix socket at
// path until stdin closes.
func serveAsOtherUser(t *testing.T, path string) {
	if os.Getuid() == 0 {
		t.Fatal("the other user is root")
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	os.Stdout.WriteString("listening\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}
