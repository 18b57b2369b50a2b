package connect

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memminer/memminer/clients/skill"
)

// newHiveWith is a hive with the published skills names.
func newHiveWith(t *testing.T, names ...string) string {
	t.Helper()
	h := t.TempDir()
	for _, n := range names {
		if _, err := skill.Propose(h, n, []byte("---\nname: "+n+"\ndescription: "+n+".\n---\n"), "eng"); err != nil {
			t.Fatal(err)
		}
		if _, err := skill.Approve(h, n, "ann"); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func installed(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestConnectRecordsSkills: connect installs the hive's published skills
// and records where, which SyncSkills reads to bring them in step; a
// connect with another hive takes the first hive's copies out, and
// disconnect takes out what was installed.
func TestConnectRecordsSkills(t *testing.T) {
	opts := testOptions(t, "dwight")
	dir := filepath.Join(opts.Scope.Home, ".claude", "skills")
	first, second := newHiveWith(t, "deploy"), newHiveWith(t, "release")
	opts.Hive = first
	res, err := Connect("claude-code", opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skills == nil || !slices.Equal(res.Skills.Installed, []string{"deploy"}) || !slices.Equal(installed(t, dir), []string{"deploy"}) {
		t.Fatalf("connect: %+v, folder %v", res.Skills, installed(t, dir))
	}
	conns, err := Connections(opts.StateDir)
	if err != nil || len(conns) != 1 || conns[0].Hive != first || conns[0].Skills != dir {
		t.Fatalf("record %+v, %v; want hive %s, skills %s", conns, err, first, dir)
	}

	// The daemon names the hive through a link: the same hive.
	link := filepath.Join(t.TempDir(), "hive")
	if err := os.Symlink(first, link); err != nil {
		t.Fatal(err)
	}
	if _, err := skill.Deprecate(first, "deploy", "ann"); err != nil {
		t.Fatal(err)
	}
	newHive := newHiveWith(t, "other")
	for _, h := range []string{newHive, link} {
		if _, err := SyncSkills(opts.StateDir, opts.Scope.Home, h); err != nil {
			t.Fatal(err)
		}
	}
	if got := installed(t, dir); len(got) != 0 {
		t.Errorf("after the deprecation, SyncSkills left %v", got)
	}

	if _, err := skill.Propose(first, "deploy", []byte("---\nname: deploy\ndescription: v2.\n---\n"), "eng"); err != nil {
		t.Fatal(err)
	}
	if _, err := skill.Approve(first, "deploy", "ann"); err != nil {
		t.Fatal(err)
	}
	if _, err := SyncSkills(opts.StateDir, opts.Scope.Home, first); err != nil || !slices.Equal(installed(t, dir), []string{"deploy"}) {
		t.Fatalf("SyncSkills after a new publication: %v, folder %v", err, installed(t, dir))
	}
	opts.Hive = second
	if _, err := Connect("claude-code", opts); err != nil {
		t.Fatal(err)
	}
	if got := installed(t, dir); !slices.Equal(got, []string{"release"}) {
		t.Errorf("connected to another hive, the folder holds %v, want its skill alone", got)
	}
	res, err = Disconnect("claude-code", opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skills == nil || !slices.Equal(res.Skills.Removed, []string{"release"}) || len(installed(t, dir)) != 0 {
		t.Errorf("disconnect: %+v, folder %v", res.Skills, installed(t, dir))
	}
}
