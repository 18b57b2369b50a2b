package conflicts

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/palace"
)

func TestScanHiveAndWings(t *testing.T) {
	hv := newHiveDir(t)
	mtime := time.Date(2024, 1, 31, 9, 30, 0, 500, time.UTC)
	copies := []string{
		"agents/dwight/" + copyName,
		"agents/pam/notes/todo.sync-conflict-20240201-101010-ZYXWVUT.md",
		"shared/readme.sync-conflict-20240201-101010-.md", // no winning device recorded
	}
	for _, rel := range copies {
		p := filepath.Join(hv, filepath.FromSlash(rel))
		writeFile(t, p, "lost fact\n")
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	// Not conflict copies.
	writeFile(t, filepath.Join(hv, "agents", "pam", "sync-conflict-notes.md"), "x")
	writeFile(t, filepath.Join(hv, ".stversions", "agents", "pam", copyName), "x")

	dwightCopy := filepath.Join(hv, "agents", "dwight", copyName)
	known := []Conflict{{
		Path: dwightCopy, Original: filepath.Join(hv, "agents", "dwight", "memory.md"), Wing: "dwight",
		Detected: time.Date(2025, 5, 5, 5, 5, 5, 0, time.UTC), Device: "ABCDEFG", DeviceName: "bravo", FoundBy: FoundByEvent,
	}, {
		// A conflict resolved since: not on disk, so not listed.
		Path: filepath.Join(hv, "agents", "pam", copyName), Original: filepath.Join(hv, "agents", "pam", "memory.md"),
		Wing: "pam", Device: "ABCDEFG", DeviceName: "bravo", FoundBy: FoundByScan,
	}}

	got, err := ScanHive(context.Background(), hv, nil, "", known)
	if err != nil {
		t.Fatal(err)
	}
	want := []Conflict{
		{Path: filepath.Join(hv, "shared", "readme.sync-conflict-20240201-101010-.md"), Original: filepath.Join(hv, "shared", "readme.md"),
			Detected: mtime.Truncate(time.Second), FoundBy: FoundByScan},
		known[0],
		{Path: filepath.Join(hv, "agents", "pam", "notes", "todo.sync-conflict-20240201-101010-ZYXWVUT.md"),
			Original: filepath.Join(hv, "agents", "pam", "notes", "todo.md"), Wing: "pam",
			Detected: mtime.Truncate(time.Second), Device: "ZYXWVUT", FoundBy: FoundByScan},
	}
	checkList(t, "ScanHive", got, want)

	got, err = ScanHive(context.Background(), hv, nil, "pam", known)
	if err != nil {
		t.Fatal(err)
	}
	checkList(t, "ScanHive pam", got, want[2:])
	got, err = ScanHive(context.Background(), hv, nil, "nobody", known)
	if err != nil || len(got) != 0 {
		t.Fatalf("ScanHive of a missing wing = %v, %v", got, err)
	}

	// Wing roots: a directory root and a file root.
	got, err = ScanWings(context.Background(), []WingRoots{
		{Wing: "dwight", Roots: []string{filepath.Join(hv, "agents", "dwight", "memory.md"), filepath.Join(hv, "gone")}},
		{Wing: "pam", Roots: []string{filepath.Join(hv, "agents", "pam")}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = []Conflict{
		{Path: dwightCopy, Original: filepath.Join(hv, "agents", "dwight", "memory.md"), Wing: "dwight",
			Detected: mtime.Truncate(time.Second), Device: "ABCDEFG", FoundBy: FoundByScan},
		want[2],
	}
	checkList(t, "ScanWings", got, want)
}

func checkList(t *testing.T, what string, got, want []Conflict) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d conflicts, want %d:\n got %+v\nwant %+v", what, len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s[%d]:\n got %+v\nwant %+v", what, i, got[i], want[i])
		}
	}
}

func TestListWing(t *testing.T) {
	l := List{Conflicts: []Conflict{{Path: "/a", Wing: "dwight"}, {Path: "/b", Wing: "pam"}, {Path: "/c"}}}
	tests := []struct {
		wing string
		want int
	}{{"", 3}, {"dwight", 1}, {"jim", 0}}
	for _, tt := range tests {
		got := l.Wing(tt.wing)
		if got.Conflicts == nil || len(got.Conflicts) != tt.want {
			t.Errorf("Wing(%q) = %+v, want %d", tt.wing, got, tt.want)
		}
	}
}

// TestScanSymlinks: a hive that is a symlink, and an agent directory that
// is one into the hive (the daemon mines both), are walked, paths staying
// below the hive as configured; an agent directory that is a link out of
// the hive is no agent (the daemon does not mine it) and is not scanned.
func TestScanSymlinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	writeFile(t, filepath.Join(real, "agents", "dwight", copyName), "lost\n")
	shared := filepath.Join(real, "shared", "angela")
	writeFile(t, filepath.Join(shared, "notes", copyName), "lost\n")
	if err := os.Symlink(shared, filepath.Join(real, "agents", "angela")); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(dir, "elsewhere", "kevin")
	writeFile(t, filepath.Join(elsewhere, copyName), "lost\n")
	if err := os.Symlink(elsewhere, filepath.Join(real, "agents", "kevin")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	angela := Conflict{
		Path: filepath.Join(link, "agents", "angela", "notes", copyName), Original: filepath.Join(link, "agents", "angela", "notes", "memory.md"),
		Wing: "angela", Device: "ABCDEFG", FoundBy: FoundByScan,
	}
	dwight := Conflict{
		Path: filepath.Join(link, "agents", "dwight", copyName), Original: filepath.Join(link, "agents", "dwight", "memory.md"),
		Wing: "dwight", Device: "ABCDEFG", FoundBy: FoundByScan,
	}
	tests := []struct {
		wing string
		want []Conflict
	}{
		// The walk of the hive meets angela's copy in shared/ too: one
		// conflict, under the path that gives it a wing.
		{"", []Conflict{angela, dwight}},
		{"angela", []Conflict{angela}},
		{"dwight", []Conflict{dwight}},
		{"kevin", nil},
	}
	for _, tt := range tests {
		got, err := ScanHive(context.Background(), link, nil, tt.wing, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			got[i].Detected = time.Time{}
		}
		checkList(t, "ScanHive "+tt.wing, got, tt.want)
	}
}

// TestGlobAgentConflicts: a conflict copy in a directory an agents glob
// matches belongs to that directory's wing, whether a scan of the hive or
// of the wing finds it, a symlinked one included; a copy in a directory
// whose wing id agents/pam has counts for pam, so pam's check sees it.
func TestGlobAgentConflicts(t *testing.T) {
	tmp := t.TempDir()
	hv := filepath.Join(tmp, "hive")
	agents := []string{"bots/*"}
	writeFile(t, filepath.Join(hv, "agents", "pam", "memory.md"), "- draws\n")
	kevin := filepath.Join(hv, "bots", "Kevin", "notes", copyName)
	writeFile(t, kevin, "lost\n")
	pam := filepath.Join(hv, "bots", "pam", copyName)
	writeFile(t, pam, "lost\n")
	elsewhere := filepath.Join(tmp, "elsewhere", "oscar")
	writeFile(t, filepath.Join(elsewhere, copyName), "lost\n")
	if err := os.Symlink(elsewhere, filepath.Join(hv, "bots", "oscar")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		agents []string
		wing   string
		want   map[string]string // copy → its wing
	}{
		// bots/oscar leads out of the hive: no agent, never scanned.
		{agents, "", map[string]string{kevin: "kevin", pam: "pam"}},
		{agents, "kevin", map[string]string{kevin: "kevin"}},
		{agents, "oscar", map[string]string{}},
		{agents, "pam", map[string]string{pam: "pam"}},
		// Without the glob bots/ is a plain directory, its symlinks not followed.
		{nil, "", map[string]string{kevin: "", pam: ""}},
		{nil, "kevin", map[string]string{}},
	}
	for _, tt := range tests {
		got, err := ScanHive(context.Background(), hv, tt.agents, tt.wing, nil)
		if err != nil {
			t.Fatal(err)
		}
		wings := map[string]string{}
		for _, c := range got {
			wings[c.Path] = c.Wing
		}
		if !maps.Equal(wings, tt.want) {
			t.Errorf("ScanHive(agents %q, wing %q): copy → wing %v, want %v", tt.agents, tt.wing, wings, tt.want)
		}
	}
	if got, err := mustOpen(t, hv, agents).Wings(); err != nil || !slices.Equal(got, []string{"kevin", "pam"}) {
		t.Errorf("Wings with agents %q = %v, %v", agents, got, err)
	}

	// The daemon's component, first without the glob: kevin's copy is
	// recorded without a wing.
	pal := filepath.Join(tmp, "palace")
	logs := newLogRecorder(t)
	r := startDaemon(t, pal, hv, newComponent(t, Options{}), 0, logs.logger())
	if l := r.list(t, ""); len(l.Conflicts) != 2 {
		t.Fatalf("GET /conflicts without the glob = %+v, want 2 copies", l)
	}
	r.stop(t)
	known, err := ReadRegistry(pal)
	if err != nil {
		t.Fatal(err)
	}
	// Read without a daemon, the record is kept but takes the wing the
	// glob gives.
	var record Conflict
	for _, k := range known {
		if k.Path == kevin {
			record = k
		}
	}
	if record.Path == "" || record.Wing != "" {
		t.Fatalf("registry without the glob: %+v", known)
	}
	record.Wing = "kevin"
	if got, err := ScanHive(context.Background(), hv, agents, "kevin", known); err != nil || len(got) != 1 || got[0] != record {
		t.Fatalf("ScanHive of kevin with the registry = %+v, %v; want %+v", got, err, record)
	}
	// With the glob, GET /conflicts?wing=kevin knows kevin (a glob's agent
	// directory, no wing of the palace) and finds his recorded copy.
	r = startDaemon(t, pal, hv, newComponent(t, Options{}), 0, logs.logger(), agents...)
	l := r.list(t, "kevin")
	if len(l.Conflicts) != 1 || l.Conflicts[0].Path != kevin || l.Conflicts[0].Wing != "kevin" {
		t.Fatalf("GET /conflicts?wing=kevin = %+v", l)
	}
	if l := r.list(t, ""); len(l.Conflicts) != 2 {
		t.Fatalf("GET /conflicts = %+v, want the 2 copies in the hive", l)
	}
	if n := len(logs.records(alertMsg)); n != 2 {
		t.Fatalf("%d alerts, want one for each of the 2 copies", n)
	}
}

func TestUnknownWingError(t *testing.T) {
	tests := []struct {
		known []string
		want  string
	}{
		{[]string{"pam", "dwight", "pam"}, `unknown wing "jim" (known wings: dwight, pam)`},
		{nil, `unknown wing "jim": neither the palace nor the hive has any wing yet`},
	}
	for _, tt := range tests {
		err := UnknownWingError("jim", tt.known)
		if !errors.Is(err, palace.ErrUnknownWing) || err.Error() != tt.want {
			t.Errorf("UnknownWingError(jim, %v) = %v, want %q", tt.known, err, tt.want)
		}
	}
}

// BenchmarkScanHive measures the walk every GET /conflicts makes: of one
// wing's agent directory (?wing=ID) and of the whole hive, 100 agents of
// 20 markdown files each (in two directories), one conflict copy each.
func BenchmarkScanHive(b *testing.B) {
	hv := filepath.Join(b.TempDir(), "hive")
	for a := range 100 {
		dir := filepath.Join(hv, "agents", fmt.Sprintf("agent%03d", a))
		for f := range 20 {
			sub := dir
			if f%2 == 1 {
				sub = filepath.Join(dir, "notes")
			}
			writeFile(b, filepath.Join(sub, fmt.Sprintf("note%02d.md", f)), "# note\n")
		}
		writeFile(b, filepath.Join(dir, copyName), "lost\n")
	}
	for _, bc := range []struct{ name, wing string }{{"wing", "agent042"}, {"hive", ""}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := ScanHive(context.Background(), hv, nil, bc.wing, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReconcileResolvesRecordsOutsideTheHive: a conflict recorded below an
// agent link that leads out of the hive (by a version that followed such
// links) is resolved by the next scan, which no longer covers it; a record
// inside the hive that the scan did not list is kept while its copy exists.
func TestReconcileResolvesRecordsOutsideTheHive(t *testing.T) {
	hv := newHiveDir(t)
	elsewhere := filepath.Join(filepath.Dir(hv), "elsewhere", "oscar")
	writeFile(t, filepath.Join(elsewhere, copyName), "lost\n")
	if err := os.Symlink(elsewhere, filepath.Join(hv, "agents", "oscar")); err != nil {
		t.Fatal(err)
	}
	pam := filepath.Join(hv, "agents", "pam", copyName)
	writeFile(t, pam, "lost\n")
	h := mustOpen(t, hv, nil)
	reg := newRegistry(filepath.Join(t.TempDir(), "conflicts.json"), h)
	oscar := Conflict{Path: filepath.Join(hv, "agents", "oscar", copyName), Wing: "oscar", FoundBy: FoundByScan}
	reg.open[oscar.Path] = oscar
	reg.open[pam] = Conflict{Path: pam, Wing: "pam", FoundBy: FoundByEvent}
	added, resolved, err := reg.reconcile(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 0 || len(resolved) != 1 || resolved[0] != oscar {
		t.Fatalf("added %+v, resolved %+v; want oscar's record resolved", added, resolved)
	}
	if _, ok := reg.open[pam]; !ok {
		t.Fatal("pam's record, whose copy exists in the hive, was resolved")
	}
}

// TestKnownWing: a wing is known when it is an agent directory of the
// hive or a wing of the palace, and nothing else makes it so; an unknown
// one is refused naming the known wings of both (docs/conflicts.md).
func TestKnownWing(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"angela", "oscar"} {
		if err := os.MkdirAll(filepath.Join(dir, "agents", id), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := mustOpen(t, dir, nil)
	inPalace := []string{"kevin"}
	wings := Wings{
		Has: func(w string) (bool, error) { return slices.Contains(inPalace, w), nil },
		All: func() ([]string, error) { return inPalace, nil },
	}
	tests := []struct {
		wing string
		hive *hive.Hive // nil: no hive configured (the scan of wing roots)
		want string     // "" for known, else the error's text
	}{
		{"angela", h, ""},
		{"kevin", h, ""},
		{"dwight", h, `unknown wing "dwight" (known wings: angela, kevin, oscar)`},
		{"kevin", nil, ""},
		{"angela", nil, `unknown wing "angela" (known wings: kevin)`},
	}
	for _, tt := range tests {
		err := KnownWing(tt.wing, tt.hive, wings)
		if tt.want == "" && err != nil || tt.want != "" && (!errors.Is(err, palace.ErrUnknownWing) || !strings.HasSuffix(err.Error(), tt.want)) {
			t.Errorf("KnownWing(%q) = %v, want %q", tt.wing, err, tt.want)
		}
	}
}
