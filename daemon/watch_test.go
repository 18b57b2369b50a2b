package daemon

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/testutil"
)

// recordingTarget is a watchTarget that records what the watcher says.
type recordingTarget struct {
	mined, debouncing []string
	dirChanges        []bool
	scans             []string
}

func (r *recordingTarget) watchDegraded(string)    {}
func (r *recordingTarget) watchError()             {}
func (r *recordingTarget) rescan(trigger string)   { r.scans = append(r.scans, trigger) }
func (r *recordingTarget) agentChanged(dir string) { r.mined = append(r.mined, dir) }
func (r *recordingTarget) agentDirsChanged(refresh bool) {
	r.dirChanges = append(r.dirChanges, refresh)
}
func (r *recordingTarget) setDebouncing(dir string, on bool) {
	if on {
		r.debouncing = append(r.debouncing, dir)
	}
}

// TestWatcherEvents: the watcher maps events to agent directories by the
// hive's rules, debounces them into one mine, ignores conflict copies and
// hidden files, and tells of agent directories that come and go.
func TestWatcherEvents(t *testing.T) {
	tmp := t.TempDir()
	hv := filepath.Join(tmp, "hive")
	testutil.WriteFile(t, filepath.Join(hv, "agents", "pam", "memory.md"), "- x\n")
	if err := os.MkdirAll(filepath.Join(hv, "agents", "Bad Name"), 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := hive.Open(hv, nil)
	if err != nil {
		t.Fatal(err)
	}
	const debounce = time.Second
	tests := []struct {
		name       string
		event      fsnotify.Event
		mined      bool
		dirChanges []bool
	}{
		{"memory edit", fsnotify.Event{Name: "agents/pam/memory.md", Op: fsnotify.Write}, true, nil},
		{"other markdown", fsnotify.Event{Name: "agents/pam/notes.markdown", Op: fsnotify.Create}, true, nil},
		{"conflict copy", fsnotify.Event{Name: "agents/pam/memory.sync-conflict-20261201-095500.md", Op: fsnotify.Create}, false, nil},
		{"conflict copy with device", fsnotify.Event{Name: "agents/pam/memory.sync-conflict-20261201-095500-ABCDEF1.md", Op: fsnotify.Create}, false, nil},
		{"hidden file", fsnotify.Event{Name: "agents/pam/.memory.md.swp", Op: fsnotify.Write}, false, nil},
		{"in a hidden directory", fsnotify.Event{Name: "agents/pam/.git/x.md", Op: fsnotify.Write}, false, nil},
		{"not markdown", fsnotify.Event{Name: "agents/pam/image.png", Op: fsnotify.Write}, false, nil},
		{"chmod", fsnotify.Event{Name: "agents/pam/memory.md", Op: fsnotify.Chmod}, false, nil},
		{"outside agent directories", fsnotify.Event{Name: "README.md", Op: fsnotify.Write}, false, nil},
		{"agent directory removed", fsnotify.Event{Name: "agents/pam", Op: fsnotify.Remove}, true, []bool{false}},
		{"bad name appears", fsnotify.Event{Name: "agents/Bad Name", Op: fsnotify.Create}, false, []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			to := &recordingTarget{}
			w, err := newWatcher(h, to, slog.New(slog.DiscardHandler), debounce, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			defer w.fw.Close()
			ev := tt.event
			ev.Name = filepath.Join(hv, filepath.FromSlash(ev.Name))
			now := time.Now()
			w.handle(ev, now)
			w.handle(ev, now.Add(debounce/2)) // a burst mines once
			w.fire(now.Add(2 * debounce))
			pam := hive.ResolveParent(filepath.Join(hv, "agents", "pam"))
			if got := slices.Equal(to.mined, []string{pam}); got != tt.mined {
				t.Errorf("mined %q, want pam's mine: %v", to.mined, tt.mined)
			}
			// Each of the two events says so.
			if want := append(slices.Clone(tt.dirChanges), tt.dirChanges...); !slices.Equal(to.dirChanges, want) {
				t.Errorf("agentDirsChanged calls %v, want %v", to.dirChanges, want)
			}
		})
	}
}
