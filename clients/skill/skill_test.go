package skill

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/secrets/secretstest"
)

func skillMD(name, desc string) []byte {
	return []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n\nSteps.\n")
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		data string
		err  string
	}{
		{"deploy", string(skillMD("deploy", "Deploy the API")), ""},
		{"Deploy", string(skillMD("Deploy", "x")), "lower-case"},
		{"de_ploy", string(skillMD("de_ploy", "x")), "lower-case"},
		{"deploy", "# no frontmatter\n", "no frontmatter name"},
		{"deploy", string(skillMD("other", "x")), `frontmatter name is "other"`},
		{"deploy", "---\nname: deploy\n---\nbody\n", "no frontmatter description"},
		{"deploy", string(skillMD("deploy", strings.Repeat("d", 1025))), "over 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name+tt.err, func(t *testing.T) {
			_, err := Parse(tt.name, []byte(tt.data))
			if tt.err == "" && err != nil || tt.err != "" && (!errors.Is(err, ErrBadSkill) || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("Parse: %v, want %q", err, tt.err)
			}
		})
	}
}

func names(ss []Skill, state string) []string {
	var out []string
	for _, s := range ss {
		if s.State == state {
			out = append(out, s.Name)
		}
	}
	return out
}

// TestLifecycle: propose, approve, improve, deprecate; each step moves
// the folder and is logged.
func TestLifecycle(t *testing.T) {
	h := t.TempDir()
	if _, err := Propose(h, "deploy", skillMD("deploy", "Deploy v1"), "eng"); err != nil {
		t.Fatal(err)
	}
	if _, err := Propose(h, "deploy", skillMD("deploy", "again"), "eng"); !errors.Is(err, ErrExists) {
		t.Errorf("second proposal: %v, want ErrExists", err)
	}
	if _, err := Approve(h, "deploy", "ann"); err != nil {
		t.Fatal(err)
	}
	if _, err := Propose(h, "deploy", skillMD("deploy", "Deploy v2"), "ops"); err != nil {
		t.Fatal(err)
	}
	if _, err := Propose(h, "lint", skillMD("lint", "Lint"), "ops"); err != nil {
		t.Fatal(err)
	}
	if err := Reject(h, "lint", "ann", "too\nvague"); err != nil {
		t.Fatal(err)
	}
	s, err := Approve(h, "deploy", "ann")
	if err != nil || s.Description != "Deploy v2" {
		t.Fatalf("approve the improvement: %+v %v", s, err)
	}
	all, problems, err := List(h)
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	if got := names(all, Published); !slices.Equal(got, []string{"deploy"}) {
		t.Errorf("published %v", got)
	}
	if got := names(all, Deprecated); !slices.Equal(got, []string{"deploy"}) {
		t.Errorf("deprecated (the replaced version) %v", got)
	}
	if _, err := Deprecate(h, "deploy", "ann"); err != nil {
		t.Fatal(err)
	}
	if _, err := Deprecate(h, "deploy", "ann"); !errors.Is(err, ErrNoSkill) {
		t.Errorf("deprecate twice: %v", err)
	}
	if err := Reject(h, "lint", "ann", ""); !errors.Is(err, ErrNoSkill) {
		t.Errorf("reject what is not proposed: %v", err)
	}
	log, _ := os.ReadFile(logFile(h))
	for _, want := range []string{"proposed deploy by eng", "approved deploy by ann", "rejected lint by ann: too vague", "deprecated deploy by ann"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// TestInstall: published skills are copied into a client's folder and
// kept in step; the user's own skill of the same name, and any other,
// is never touched.
func TestInstall(t *testing.T) {
	h, client := t.TempDir(), filepath.Join(t.TempDir(), "skills")
	for _, n := range []string{"deploy", "review"} {
		if _, err := Propose(h, n, skillMD(n, "about "+n), "eng"); err != nil {
			t.Fatal(err)
		}
		if _, err := Approve(h, n, "ann"); err != nil {
			t.Fatal(err)
		}
	}
	mine := filepath.Join(client, "review", FileName)
	os.MkdirAll(filepath.Dir(mine), 0o755)
	os.WriteFile(mine, skillMD("review", "the user's own"), 0o644)
	other := filepath.Join(client, "notes", FileName)
	os.MkdirAll(filepath.Dir(other), 0o755)
	os.WriteFile(other, skillMD("notes", "another"), 0o644)

	got, err := Install(client, h)
	if err != nil || !slices.Equal(got.Installed, []string{"deploy"}) || !slices.Equal(got.Kept, []string{"review"}) {
		t.Fatalf("install: %+v %v", got, err)
	}
	if b, _ := os.ReadFile(filepath.Join(client, "deploy", FileName)); !strings.Contains(string(b), "about deploy") {
		t.Errorf("deploy not installed: %q", b)
	}
	if _, err := Deprecate(h, "deploy", "ann"); err != nil {
		t.Fatal(err)
	}
	if got, err = Install(client, h); err != nil || !slices.Equal(got.Removed, []string{"deploy"}) {
		t.Errorf("install after deprecate: %+v %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(client, "deploy")); !os.IsNotExist(err) {
		t.Errorf("deprecated skill still installed: %v", err)
	}
	if _, err := Propose(h, "deploy", skillMD("deploy", "again"), "eng"); err != nil {
		t.Fatal(err)
	}
	Approve(h, "deploy", "ann")
	Install(client, h)
	if got, err = Remove(client, h); err != nil || !slices.Equal(got.Removed, []string{"deploy"}) {
		t.Errorf("remove: %+v %v", got, err)
	}
	for _, f := range []string{mine, other} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s was touched: %v", f, err)
		}
	}
}

// TestMovesStayInTheHive: a link another user of the hive puts where a
// skill moves (skills/deprecated to a folder of the person's) leads no
// removal or move out of the hive, and a link in place of SKILL.md or the
// log is not followed.
func TestMovesStayInTheHive(t *testing.T) {
	h := t.TempDir()
	outside := t.TempDir()
	mine := filepath.Join(outside, "deploy", "keep.txt")
	if err := os.MkdirAll(filepath.Dir(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("the person's own file"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"Deploy v1", "Deploy v2"} {
		if _, err := Propose(h, "deploy", skillMD("deploy", v), "eng"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(h, Dir, Deprecated)); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
		// The second approval retires the first version through the link.
		Approve(h, "deploy", "person")
	}
	Deprecate(h, "deploy", "person")
	if data, err := os.ReadFile(mine); err != nil || string(data) != "the person's own file" {
		t.Errorf("the file outside the hive: %q, %v", data, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("outside the hive: %d entries, want the person's one", len(entries))
	}
	// A SKILL.md that is a link is no skill; a log that is a link is not
	// written through.
	other := filepath.Join(outside, "SKILL.md")
	if err := os.WriteFile(other, skillMD("lint", "theirs"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(h, Dir, Proposed, "lint")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(dir, FileName)); err != nil {
		t.Fatal(err)
	}
	if _, err := load(h, Proposed, "lint"); err == nil {
		t.Error("a SKILL.md that is a link was read")
	}
	log := filepath.Join(outside, "log")
	os.WriteFile(log, nil, 0o600)
	os.Remove(logFile(h))
	if err := os.Symlink(log, logFile(h)); err != nil {
		t.Fatal(err)
	}
	if err := logf(h, "x"); err == nil {
		t.Error("the log was written through a link")
	}
	if data, _ := os.ReadFile(log); len(data) != 0 {
		t.Errorf("the file behind the link holds %q", data)
	}
}

// TestSecretsStayOut: a skill is copied into every connected client and
// shown in search, so one holding a credential is neither proposed nor
// published, and one published before is shown masked.
func TestSecretsStayOut(t *testing.T) {
	for _, cred := range secretstest.Ten() {
		h := t.TempDir()
		md := []byte("---\nname: push\ndescription: Push the mirror.\n---\n# push\n\n" + cred.Note + "\n")
		oneLine := !strings.Contains(cred.Note, "\n")
		if oneLine {
			// Quoted: a note may hold ": ".
			md = skillMD("push", "'Push the mirror. "+strings.ReplaceAll(cred.Note, "'", "''")+"'")
		}
		if _, err := Propose(h, "push", md, "eng"); !errors.Is(err, ErrSecret) {
			t.Errorf("%s: Propose = %v, want ErrSecret", cred.Kind, err)
		}
		if _, err := os.Stat(filepath.Join(h, Dir, Proposed, "push")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: a refused proposal left %v", cred.Kind, err)
		}
		// Put in the hive by hand, past propose: approve refuses it.
		dir := filepath.Join(h, Dir, Proposed, "push")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, FileName), md, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Approve(h, "push", "ann"); !errors.Is(err, ErrSecret) {
			t.Errorf("%s: Approve = %v, want ErrSecret", cred.Kind, err)
		}
		if !oneLine {
			continue // a description is one line
		}
		// Published before the check: search masks it.
		pub := filepath.Join(h, Dir, Published, "push")
		if err := os.MkdirAll(filepath.Dir(pub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(dir, pub); err != nil {
			t.Fatal(err)
		}
		got, err := Search(h, "push the mirror", 0.2, 5)
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: Search = %v, %v", cred.Kind, got, err)
		}
		if cred.In(got[0].Description) {
			t.Errorf("%s: search shows the secret: %q", cred.Kind, got[0].Description)
		}
	}
}

// copyDir copies the folder src to dst, as cp -r does.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// TestForkIsTheUsers: a folder copied from an installed skill to fork it
// carries the marker along, but names another skill: no sync or
// disconnect removes it. A marker of before the name was recorded counts
// only in a folder named as a skill of the hive.
func TestForkIsTheUsers(t *testing.T) {
	h, client := t.TempDir(), filepath.Join(t.TempDir(), "skills")
	if _, err := Propose(h, "deploy-drill", skillMD("deploy-drill", "the drill"), "eng"); err != nil {
		t.Fatal(err)
	}
	if _, err := Approve(h, "deploy-drill", "ann"); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(client, h); err != nil {
		t.Fatal(err)
	}
	fork := filepath.Join(client, "my-drill")
	copyDir(t, filepath.Join(client, "deploy-drill"), fork)
	os.WriteFile(filepath.Join(fork, FileName), skillMD("my-drill", "my own drill"), 0o644)
	// A fork of a copy installed by an older memminer: its marker names
	// the hive alone.
	oldFork, oldCopy := filepath.Join(client, "old-drill"), filepath.Join(client, "deploy-drill")
	copyDir(t, oldCopy, oldFork)
	for _, d := range []string{oldFork, oldCopy} {
		os.WriteFile(filepath.Join(d, Marker), []byte(h+"\n"), 0o644)
	}

	if got, err := Install(client, h); err != nil || len(got.Removed) != 0 {
		t.Errorf("sync: %+v %v", got, err)
	}
	Deprecate(h, "deploy-drill", "ann")
	if got, err := Install(client, h); err != nil || !slices.Equal(got.Removed, []string{"deploy-drill"}) {
		t.Errorf("sync after deprecate: %+v %v, want deploy-drill (old marker, its own name) removed", got, err)
	}
	if got, err := Remove(client, ""); err != nil || len(got.Removed) != 0 {
		t.Errorf("remove: %+v %v", got, err)
	}
	for _, d := range []string{fork, oldFork} {
		if _, err := os.Stat(filepath.Join(d, FileName)); err != nil {
			t.Errorf("the fork %s was removed: %v", d, err)
		}
	}
}

// TestInstallKeepsEdits: a sync copies a skill only when the hive's
// changed since it was installed, so an edit to an installed copy of an
// unchanged skill stays; an edited copy the hive's change, a deprecation
// or a disconnect would replace or remove is left and made the user's.
func TestInstallKeepsEdits(t *testing.T) {
	h, client := t.TempDir(), filepath.Join(t.TempDir(), "skills")
	publish := func(name, desc string) {
		t.Helper()
		if _, err := Propose(h, name, skillMD(name, desc), "eng"); err != nil {
			t.Fatal(err)
		}
		if _, err := Approve(h, name, "ann"); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(client, name, FileName))
		return string(b)
	}
	edit := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(client, name, FileName), skillMD(name, "my edit"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"deploy", "review", "lint", "ops"} {
		publish(n, n+" v1")
	}
	if got, err := Install(client, h); err != nil || len(got.Installed) != 4 {
		t.Fatalf("install: %+v %v", got, err)
	}
	edit("deploy")
	edit("lint")

	// Unchanged in the hive: nothing copied, the edit kept.
	got, err := Install(client, h)
	if err != nil || len(got.Installed)+len(got.Removed)+len(got.Edited) != 0 || got.OrNil() != nil {
		t.Errorf("sync with nothing changed: %+v %v", got, err)
	}
	if !strings.Contains(read("deploy"), "my edit") {
		t.Errorf("the user's edit was overwritten: %q", read("deploy"))
	}

	// Changed in the hive, copy not edited: updated. Changed and edited:
	// the edit is left and becomes the user's.
	publish("review", "review v2")
	publish("deploy", "deploy v2")
	got, err = Install(client, h)
	if err != nil || !slices.Equal(got.Installed, []string{"review"}) || !slices.Equal(got.Edited, []string{"deploy"}) {
		t.Errorf("sync after review and deploy changed: %+v %v", got, err)
	}
	if !strings.Contains(read("review"), "review v2") {
		t.Errorf("review not updated: %q", read("review"))
	}
	if !strings.Contains(read("deploy"), "my edit") {
		t.Errorf("the edited deploy was replaced: %q", read("deploy"))
	}
	if _, err := os.Stat(filepath.Join(client, "deploy", Marker)); !os.IsNotExist(err) {
		t.Errorf("the edited deploy is still marked memminer's: %v", err)
	}
	if got, err = Install(client, h); err != nil || !slices.Equal(got.Kept, []string{"deploy"}) || len(got.Installed)+len(got.Edited) != 0 {
		t.Errorf("next sync: %+v %v, want deploy kept as the user's", got, err)
	}
	// Deleting it takes the hive's version again.
	os.RemoveAll(filepath.Join(client, "deploy"))
	if got, err = Install(client, h); err != nil || !slices.Equal(got.Installed, []string{"deploy"}) || !strings.Contains(read("deploy"), "deploy v2") {
		t.Errorf("sync after the user deleted deploy: %+v %v, %q", got, err, read("deploy"))
	}

	// Deprecated: removed if ours and as installed, an edited copy left.
	Deprecate(h, "lint", "ann")
	Deprecate(h, "ops", "ann")
	if got, err = Install(client, h); err != nil || !slices.Equal(got.Removed, []string{"ops"}) || !slices.Equal(got.Edited, []string{"lint"}) {
		t.Errorf("sync after deprecations: %+v %v", got, err)
	}
	if !strings.Contains(read("lint"), "my edit") {
		t.Errorf("the edited lint was removed: %q", read("lint"))
	}
	if _, err := os.Stat(filepath.Join(client, "ops")); !os.IsNotExist(err) {
		t.Errorf("deprecated ops still installed: %v", err)
	}

	// Disconnect: the copies as installed go, an edited one stays.
	edit("review")
	if got, err = Remove(client, h); err != nil || !slices.Equal(got.Removed, []string{"deploy"}) || !slices.Equal(got.Edited, []string{"review"}) {
		t.Errorf("remove: %+v %v", got, err)
	}
	if got := read("review"); !strings.Contains(got, "my edit") {
		t.Errorf("the edited review was removed: %q", got)
	}
}

// TestInstallCopiesNothingFromOutsideTheHive: a published skill's folder
// another user of the hive leads out of it by a link (here the folder
// skills/published; the skill's own folder swapped after the listing
// is the same) to a folder of the person's own, a SKILL.md beside a key,
// is not copied into the client's skills: it is reached from a root of
// the hive, which follows no link out.
func TestInstallCopiesNothingFromOutsideTheHive(t *testing.T) {
	h, client := t.TempDir(), filepath.Join(t.TempDir(), "skills")
	outside := t.TempDir()
	keys := filepath.Join(outside, "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{FileName: skillMD("keys", "theirs"), "id_ed25519": []byte("the person's key")} {
		if err := os.WriteFile(filepath.Join(keys, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(h, Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(h, Dir, Published)); err != nil {
		t.Fatal(err)
	}
	got, err := Install(client, h)
	if slices.Contains(got.Installed, "keys") {
		t.Errorf("install: %+v %v: the folder outside the hive was installed", got, err)
	}
	if _, err := os.Lstat(filepath.Join(client, "keys", "id_ed25519")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the key outside the hive is in the client's skills: %v", err)
	}
}
