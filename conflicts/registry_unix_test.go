//go:build unix

package conflicts

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRegistryNotRegular: a conflicts.json that is a directory or a FIFO
// is refused as corrupt without blocking, and the daemon moves it aside
// with what it holds and rebuilds the registry, as for a corrupt file.
func TestRegistryNotRegular(t *testing.T) {
	t.Run("directory", func(t *testing.T) {
		testRegistryRebuilt(t, func(path string) error {
			if err := os.Mkdir(path, 0o700); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(path, "kept.txt"), []byte("kept\n"), 0o600)
		}, func(aside string) {
			if data, err := os.ReadFile(filepath.Join(aside, "kept.txt")); err != nil || string(data) != "kept\n" {
				t.Errorf("the directory's contents set aside: %q, %v", data, err)
			}
		})
	})
	t.Run("named pipe", func(t *testing.T) {
		testRegistryRebuilt(t, func(path string) error {
			return syscall.Mkfifo(path, 0o600)
		}, func(aside string) {
			if fi, err := os.Lstat(aside); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("the pipe set aside: %v, %v", fi, err)
			}
		})
	})
}

// TestSetAsideNotRegular: SetAsideCorrupt, as the CLI calls it, moves a
// directory or FIFO registry aside without opening a FIFO for reading.
func TestSetAsideNotRegular(t *testing.T) {
	for name, make := range map[string]func(path string) error{
		"directory":  func(path string) error { return os.Mkdir(path, 0o700) },
		"named pipe": func(path string) error { return syscall.Mkfifo(path, 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			pal := t.TempDir()
			if err := make(RegistryPath(pal)); err != nil {
				t.Fatal(err)
			}
			aside, err := SetAsideCorrupt(pal)
			if err != nil || aside != registryAside(t, pal) {
				t.Fatalf("SetAsideCorrupt = %q, %v", aside, err)
			}
			if known, err := ReadRegistry(pal); err != nil || len(known) != 0 {
				t.Fatalf("ReadRegistry after = %+v, %v", known, err)
			}
		})
	}
}
