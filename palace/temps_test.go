package palace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestStaleTempsRemovedByTheWriter: temporary files that writers killed
// before their rename left behind (40 kill -9s once left 5, 308 KB) are
// not counted in Bytes and are removed when the writer lock is taken,
// whether at Open or by a reader's late Lock.
func TestStaleTempsRemovedByTheWriter(t *testing.T) {
	for _, late := range []bool{false, true} {
		name := "open"
		if late {
			name = "late lock"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "palace")
			savedPalace(t, dir)
			clean := openT(t, dir, nil, true).Bytes()

			stale := []string{
				filepath.Join(dir, ".manifest.json.tmp-1234567"),
				filepath.Join(dir, wingsDir, ".a.wing.tmp-89"),
				filepath.Join(dir, ".conflicts.json.4242.tmp"),
			}
			for _, path := range stale {
				if err := os.WriteFile(path, make([]byte, 100_000), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			q := openT(t, dir, nil, true)
			if got := q.Bytes(); got != clean {
				t.Errorf("Bytes = %d with stale temporary files, %d without", got, clean)
			}
			// A reader never removes them: a writer may be mid-write.
			for _, path := range stale {
				if _, err := os.Stat(path); err != nil {
					t.Fatalf("a reader removed %s: %v", path, err)
				}
			}
			if late {
				if err := q.Lock(ctx, 0); err != nil {
					t.Fatal(err)
				}
			} else {
				q.Close()
				openT(t, dir, nil, false)
			}
			for _, path := range stale {
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Errorf("%s still there after the writer lock was taken (%v)", path, err)
				}
			}
		})
	}
}
