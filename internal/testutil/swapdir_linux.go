package testutil

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// runDirSwapper is RunSwapper for a directory: dir and a symlink to the
// target are exchanged in place (renameat2 RENAME_EXCHANGE), so dir is
// always one or the other, until stop is closed.
func runDirSwapper(t testing.TB, dir, name string, stop <-chan struct{}) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(os.Getenv(swapTextEnv)), 0o666); err != nil {
		t.Fatal(err)
	}
	link := dir + ".swap-link"
	if err := os.Symlink(os.Getenv(swapTargetEnv), link); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if err := unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			os.Stdout.WriteString("swapping\n")
		}
	}
}
