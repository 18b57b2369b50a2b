package syncthing

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseConflictName(t *testing.T) {
	at := func(y int, mo time.Month, d, h, mi, s int) time.Time {
		return time.Date(y, mo, d, h, mi, s, 0, time.Local)
	}
	tests := []struct {
		name   string
		in     string
		want   ConflictName
		wantOK bool
	}{
		{"markdown", "memory.sync-conflict-20240131-093000-ABCDEFG.md",
			ConflictName{"memory.md", at(2024, 1, 31, 9, 30, 0), "ABCDEFG"}, true},
		{"no extension", "Makefile.sync-conflict-20231224-235959-Z234567",
			ConflictName{"Makefile", at(2023, 12, 24, 23, 59, 59), "Z234567"}, true},
		{"dots in name", "notes.v2.final.sync-conflict-20250601-120000-QWERTYU.md",
			ConflictName{"notes.v2.final.md", at(2025, 6, 1, 12, 0, 0), "QWERTYU"}, true},
		{"dotfile", ".sync-conflict-20250601-120000-QWERTYU.bashrc",
			ConflictName{".bashrc", at(2025, 6, 1, 12, 0, 0), "QWERTYU"}, true},
		{"trailing dot", "odd.sync-conflict-20250601-120000-QWERTYU.",
			ConflictName{"odd.", at(2025, 6, 1, 12, 0, 0), "QWERTYU"}, true},
		{"unknown modifier", "memory.sync-conflict-20240131-093000-.md",
			ConflictName{"memory.md", at(2024, 1, 31, 9, 30, 0), ""}, true},
		{"conflict of a conflict", "memory.sync-conflict-20240131-093000-ABCDEFG.sync-conflict-20240201-101010-HIJKLMN.md",
			ConflictName{"memory.sync-conflict-20240131-093000-ABCDEFG.md", at(2024, 2, 1, 10, 10, 10), "HIJKLMN"}, true},
		{"spaces and unicode", "Mëine Notizen.sync-conflict-20240131-093000-ABCDEFG.txt",
			ConflictName{"Mëine Notizen.txt", at(2024, 1, 31, 9, 30, 0), "ABCDEFG"}, true},

		{"plain file", "memory.md", ConflictName{}, false},
		{"empty", "", ConflictName{}, false},
		{"merely contains the words", "how-to-fix-sync-conflict-errors.md", ConflictName{}, false},
		{"marker without stamp", "memory.sync-conflict-.md", ConflictName{}, false},
		{"marker only", ".sync-conflict-", ConflictName{}, false},
		{"short date", "memory.sync-conflict-2024013-093000-ABCDEFG.md", ConflictName{}, false},
		{"letters in stamp", "memory.sync-conflict-2024AB31-093000-ABCDEFG.md", ConflictName{}, false},
		{"month 13", "memory.sync-conflict-20241331-093000-ABCDEFG.md", ConflictName{}, false},
		{"hour 25", "memory.sync-conflict-20240131-253000-ABCDEFG.md", ConflictName{}, false},
		{"missing dash", "memory.sync-conflict-20240131093000-ABCDEFG.md", ConflictName{}, false},
		{"lower-case device", "memory.sync-conflict-20240131-093000-abcdefg.md", ConflictName{}, false},
		{"device not base32", "memory.sync-conflict-20240131-093000-ABCDEF1.md", ConflictName{}, false},
		{"device too long", "memory.sync-conflict-20240131-093000-ABCDEFGH.md", ConflictName{}, false},
		{"device too short", "memory.sync-conflict-20240131-093000-ABCDEF.md", ConflictName{}, false},
		{"two extensions after device", "memory.sync-conflict-20240131-093000-ABCDEFG.tar.gz", ConflictName{}, false},
		{"junk after device", "memory.sync-conflict-20240131-093000-ABCDEFG-copy.md", ConflictName{}, false},
		{"path, not base name", "agents/x/memory.sync-conflict-20240131-093000-ABCDEFG.md", ConflictName{}, false},
		{"no dot before marker", "memorysync-conflict-20240131-093000-ABCDEFG.md", ConflictName{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseConflictName(tt.in)
			if ok != tt.wantOK {
				t.Fatalf("ParseConflictName(%q) ok = %v, want %v (got %+v)", tt.in, ok, tt.wantOK, got)
			}
			if got.Original != tt.want.Original || !got.Time.Equal(tt.want.Time) || got.ShortDevice != tt.want.ShortDevice {
				t.Errorf("ParseConflictName(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if IsConflictName(tt.in) != tt.wantOK {
				t.Errorf("IsConflictName(%q) disagrees with ParseConflictName", tt.in)
			}
		})
	}
}

func TestScanConflicts(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"agents/dwight/memory.md": "winner",
		"agents/dwight/memory.sync-conflict-20240131-093000-ABCDEFG.md": "loser",
		"agents/jim/memory.sync-conflict-20240201-101010-HIJKLMN.md":    "loser",
		"agents/jim/memory.md":              "winner",
		"agents/pam/sync-conflict-howto.md": "not a conflict",
		".stversions/agents/x/memory.sync-conflict-20240131-093000-ABCDEFG.md": "old version, skipped",
		".stfolder/ignored.sync-conflict-20240131-093000-ABCDEFG.md":           "marker dir, skipped",
	}
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A directory with a conflict-like name is not a file conflict.
	if err := os.MkdirAll(filepath.Join(root, "dir.sync-conflict-20240131-093000-ABCDEFG"), 0o755); err != nil {
		t.Fatal(err)
	}

	got, err := ScanConflicts(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ path, original, short string }{
		{"agents/dwight/memory.sync-conflict-20240131-093000-ABCDEFG.md", "agents/dwight/memory.md", "ABCDEFG"},
		{"agents/jim/memory.sync-conflict-20240201-101010-HIJKLMN.md", "agents/jim/memory.md", "HIJKLMN"},
	}
	if len(got) != len(want) {
		t.Fatalf("ScanConflicts found %d conflicts, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Path != filepath.Join(root, filepath.FromSlash(w.path)) {
			t.Errorf("conflict %d path = %s, want %s", i, got[i].Path, w.path)
		}
		if got[i].Original != filepath.Join(root, filepath.FromSlash(w.original)) {
			t.Errorf("conflict %d original = %s, want %s", i, got[i].Original, w.original)
		}
		if got[i].Name.ShortDevice != w.short || got[i].ModTime.IsZero() {
			t.Errorf("conflict %d = %+v, want short %s and a mod time", i, got[i], w.short)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ScanConflicts(ctx, root); err == nil {
		t.Error("ScanConflicts with a cancelled context returned no error")
	}
	if _, err := ScanConflicts(context.Background(), filepath.Join(root, "missing")); err == nil {
		t.Error("ScanConflicts of a missing root returned no error")
	}
}
