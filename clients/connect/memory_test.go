package connect

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/secrets/secretstest"
)

// memoryOptions are testOptions with a hive memory folder for Claude
// Code, and Claude Code's memory of two projects as it kept it before.
func memoryOptions(t *testing.T) (o Options, memDir string, before map[string]string) {
	t.Helper()
	o = testOptions(t, "dwight")
	memDir = filepath.Join(o.Scope.Home, "hive", "agents", "dwight", hive.ClientMemoryDirName("claude-code", "laptop"))
	o.Install.MemoryDir = memDir
	projects := filepath.Join(o.Scope.Home, ".claude", "projects")
	before = map[string]string{
		filepath.Join(projects, "-home-dwight-app", "memory", "MEMORY.md"):        "- [db](db.md) — where Postgres runs\n",
		filepath.Join(projects, "-home-dwight-app", "memory", "db.md"):            "---\nname: db\n---\nProduction Postgres runs on db-2.\r\nno final newline",
		filepath.Join(projects, "-home-dwight-app", "memory", "deep", "x.md"):     "nested\n",
		filepath.Join(projects, "-home-dwight-ops", "memory", "MEMORY.md"):        "- ops\n",
		filepath.Join(projects, "-home-dwight-ops", "conversation.jsonl"):         "{}\n", // not memory
		filepath.Join(projects, "-home-dwight-empty", "memory", "MEMORY.md.lock"): "",
		filepath.Join(projects, "-home-dwight-none", "session.jsonl"):             "{}\n", // no memory/
		filepath.Join(o.Scope.Home, "notes", "linked.md"):                         "- kept outside, linked in\n",
	}
	for p, c := range before {
		write(t, p, c)
	}
	// A memory file that is a link to one outside ~/.claude is not
	// copied (nor is a dangling link): the hive is replicated.
	for link, to := range map[string]string{"linked.md": filepath.Join(o.Scope.Home, "notes", "linked.md"), "gone.md": filepath.Join(o.Scope.Home, "gone.md")} {
		if err := os.Symlink(to, filepath.Join(projects, "-home-dwight-ops", "memory", link)); err != nil {
			t.Fatal(err)
		}
	}
	return o, memDir, before
}

// imported is where the file at p of Claude Code's projects goes in memDir.
func imported(o Options, memDir, p string) string {
	rel, _ := filepath.Rel(filepath.Join(o.Scope.Home, ".claude", "projects"), p)
	project, rest, _ := strings.Cut(rel, string(filepath.Separator))
	return filepath.Join(memDir, "imported", project, strings.TrimPrefix(rest, "memory"+string(filepath.Separator)))
}

func TestConnectBringsClaudeMemoryIntoTheHive(t *testing.T) {
	o, memDir, before := memoryOptions(t)
	settings := filepath.Join(o.Scope.Home, ".claude", "settings.json")
	write(t, settings, claudeSettings)

	// A dry run says what it would copy, and writes nothing.
	dry := o
	dry.DryRun = true
	res, err := Connect("claude-code", dry)
	if err != nil {
		t.Fatal(err)
	}
	if res.Memory == nil || len(res.Memory.Imported) != 4 || len(res.Memory.Skipped) != 3 || res.Memory.Index != filepath.Join(memDir, "MEMORY.md") {
		t.Fatalf("dry run memory: %+v", res.Memory)
	}
	if _, err := os.Stat(memDir); !os.IsNotExist(err) {
		t.Errorf("dry run made %s (%v)", memDir, err)
	}

	res, err = Connect("claude-code", o)
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.Get(read(t, settings), "autoMemoryDirectory").String(); got != memDir {
		t.Errorf("autoMemoryDirectory = %q, want %q", got, memDir)
	}
	// Every file kept, byte for byte, where it was and in the hive.
	for p, c := range before {
		if read(t, p) != c {
			t.Errorf("%s changed", p)
		}
		if strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".lock") || !strings.HasPrefix(p, filepath.Join(o.Scope.Home, ".claude", "projects")) {
			continue
		}
		if got := read(t, imported(o, memDir, p)); got != c {
			t.Errorf("%s in the hive: %q, want %q", p, got, c)
		}
	}
	if _, err := os.Stat(filepath.Join(memDir, "imported", "-home-dwight-ops", "conversation.jsonl")); err == nil {
		t.Error("a transcript was imported as memory")
	}
	for _, name := range []string{"-home-dwight-ops/linked.md", "-home-dwight-empty/MEMORY.md.lock"} {
		if _, err := os.Lstat(filepath.Join(memDir, "imported", filepath.FromSlash(name))); err == nil {
			t.Errorf("%s was imported", name)
		}
	}
	index := read(t, filepath.Join(memDir, "MEMORY.md"))
	for _, want := range []string{"(imported/-home-dwight-app/MEMORY.md)", "(imported/-home-dwight-ops/MEMORY.md)"} {
		if !strings.Contains(index, want) {
			t.Errorf("index lacks %s:\n%s", want, index)
		}
	}
	var got struct{ Memory MemoryResult }
	b, _ := json.Marshal(res)
	if err := json.Unmarshal(b, &got); err != nil || len(got.Memory.Imported) != 4 || len(got.Memory.Skipped) != 3 || got.Memory.Setting != "autoMemoryDirectory" || got.Memory.Settings != settings {
		t.Errorf("--json memory: %s", b)
	}

	// The client wrote in the hive since, and in a project folder
	// while disconnected: connecting again never replaces a file.
	write(t, filepath.Join(memDir, "MEMORY.md"), index+"- [new](new.md) — written while connected\n")
	db := filepath.Join(o.Scope.Home, ".claude", "projects", "-home-dwight-app", "memory", "db.md")
	write(t, db, "db-3 now\n")
	res, err = Connect("claude-code", o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Memory == nil || len(res.Memory.Imported) != 1 || res.Memory.Unchanged != 3 || res.Memory.Index != "" {
		t.Fatalf("reconnect memory: %+v", res.Memory)
	}
	if to := res.Memory.Imported[0].To; to != filepath.Join(memDir, "imported", "-home-dwight-app", "db.2.md") || read(t, to) != "db-3 now\n" {
		t.Errorf("changed file copied to %s", to)
	}
	if read(t, imported(o, memDir, db)) != before[db] {
		t.Error("the first copy was replaced")
	}
	if !strings.HasSuffix(read(t, filepath.Join(memDir, "MEMORY.md")), "written while connected\n") {
		t.Error("the client's index was rewritten")
	}

	// Disconnect takes the setting out, and leaves the hive's folder.
	if _, err := Disconnect("claude-code", o); err != nil {
		t.Fatal(err)
	}
	if got := read(t, settings); got != claudeSettings {
		t.Errorf("settings after disconnect:\n%s", got)
	}
	if read(t, db) != "db-3 now\n" || read(t, imported(o, memDir, db)) != before[db] {
		t.Error("disconnect touched the memory")
	}
}

// TestDisconnectTakesOutOnlyMemminersMemorySetting: settings changed
// since connect lose autoMemoryDirectory only while it still holds
// memminer's folder; a user's own setting is never replaced or removed.
func TestDisconnectTakesOutOnlyMemminersMemorySetting(t *testing.T) {
	for _, tc := range []struct {
		name, before, since string
		want                string // autoMemoryDirectory after disconnect
		note                bool
	}{
		{name: "memminer's", before: "{\n  \"theme\": \"dark\"\n}\n", want: ""},
		{name: "changed by the user since", before: "{\n  \"theme\": \"dark\"\n}\n", since: "/srv/mine", want: "/srv/mine"},
		{name: "the user's own", before: "{\n  \"autoMemoryDirectory\": \"~/notes\"\n}\n", want: "~/notes", note: true},
		{name: "the user's own, changed since", before: "{\n  \"autoMemoryDirectory\": \"~/notes\"\n}\n", since: "/srv/mine", want: "/srv/mine", note: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, memDir, _ := memoryOptions(t)
			settings := filepath.Join(o.Scope.Home, ".claude", "settings.json")
			write(t, settings, tc.before)
			res, err := Connect("claude-code", o)
			if err != nil {
				t.Fatal(err)
			}
			if tc.note != (res.Memory == nil) || tc.note != strings.Contains(res.Note, "autoMemoryDirectory") {
				t.Errorf("memory %+v, note %q", res.Memory, res.Note)
			}
			if tc.note {
				if _, err := os.Stat(memDir); !os.IsNotExist(err) {
					t.Errorf("imported though the client does not read %s", memDir)
				}
			}
			// The client (or the user) edits the settings since.
			s := read(t, settings)
			s = strings.Replace(s, "{", "{\n  \"model\": \"opus\",", 1)
			if tc.since != "" {
				s = strings.Replace(s, gjson.Get(s, "autoMemoryDirectory").Raw, `"`+tc.since+`"`, 1)
			}
			write(t, settings, s)
			if _, err := Disconnect("claude-code", o); err != nil {
				t.Fatal(err)
			}
			s = read(t, settings)
			if got := gjson.Get(s, "autoMemoryDirectory").String(); got != tc.want {
				t.Errorf("autoMemoryDirectory = %q, want %q\n%s", got, tc.want, s)
			}
			if gjson.Get(s, "model").String() != "opus" {
				t.Errorf("the edit since was lost:\n%s", s)
			}
		})
	}
}

// TestConnectWithoutMemoryDir: without a hive (no MemoryDir), and in a
// project (whose checked-in settings Claude Code does not take the
// folder from), the settings name no memory folder.
func TestConnectWithoutMemoryDir(t *testing.T) {
	for _, tc := range []struct {
		name    string
		project bool
		dir     bool
	}{{name: "no hive"}, {name: "project", project: true, dir: true}} {
		t.Run(tc.name, func(t *testing.T) {
			o, memDir, _ := memoryOptions(t)
			if !tc.dir {
				o.Install.MemoryDir = ""
			}
			settings := filepath.Join(o.Scope.Home, ".claude", "settings.json")
			if tc.project {
				o.Scope.Project = t.TempDir()
				settings = filepath.Join(o.Scope.Project, ".claude", "settings.json")
			}
			res, err := Connect("claude-code", o)
			if err != nil {
				t.Fatal(err)
			}
			if s := read(t, settings); gjson.Get(s, "autoMemoryDirectory").Exists() || res.Memory != nil {
				t.Errorf("settings %s, memory %+v", s, res.Memory)
			}
			if _, err := os.Stat(memDir); !os.IsNotExist(err) {
				t.Errorf("made %s", memDir)
			}
		})
	}
}

// TestConnectLeavesAMemoryFolderNamedLikeMemminers: a user's own
// autoMemoryDirectory whose name merely looks like a hive's client
// memory folder (team-memory.shared) is the user's: connect leaves it
// with the note, imports nothing, and disconnect leaves it too.
func TestConnectLeavesAMemoryFolderNamedLikeMemminers(t *testing.T) {
	for _, own := range []string{"/x/team-memory.shared", "/x/agents/dwight/claude-code-memory.laptop"} {
		t.Run(own, func(t *testing.T) {
			o, memDir, _ := memoryOptions(t)
			o.Hive = filepath.Join(o.Scope.Home, "hive")
			settings := filepath.Join(o.Scope.Home, ".claude", "settings.json")
			write(t, settings, "{\n  \"autoMemoryDirectory\": \""+own+"\"\n}\n")
			res, err := Connect("claude-code", o)
			if err != nil {
				t.Fatal(err)
			}
			if got := gjson.Get(read(t, settings), "autoMemoryDirectory").String(); got != own {
				t.Errorf("autoMemoryDirectory = %q, want the user's %q", got, own)
			}
			if res.Memory != nil || !strings.Contains(res.Note, "not by memminer") {
				t.Errorf("memory %+v, note %q", res.Memory, res.Note)
			}
			if _, err := os.Stat(memDir); !os.IsNotExist(err) {
				t.Errorf("imported into %s though the client does not read it", memDir)
			}
			if _, err := Disconnect("claude-code", o); err != nil {
				t.Fatal(err)
			}
			if got := gjson.Get(read(t, settings), "autoMemoryDirectory").String(); got != own {
				t.Errorf("after disconnect autoMemoryDirectory = %q, want %q", got, own)
			}
		})
	}
	// memminer's folder for another machine of the hive is memminer's.
	o, memDir, _ := memoryOptions(t)
	o.Hive = filepath.Join(o.Scope.Home, "hive")
	other := filepath.Join(filepath.Dir(memDir), hive.ClientMemoryDirName("claude-code", "desktop"))
	settings := filepath.Join(o.Scope.Home, ".claude", "settings.json")
	write(t, settings, "{\n  \"autoMemoryDirectory\": \""+other+"\"\n}\n")
	if _, err := Connect("claude-code", o); err != nil {
		t.Fatal(err)
	}
	if got := gjson.Get(read(t, settings), "autoMemoryDirectory").String(); got != memDir {
		t.Errorf("another machine's folder of the hive: autoMemoryDirectory = %q, want %q", got, memDir)
	}
}

// TestConnectImportsOnlyTheClientsMemoryFiles: the import copies into the
// hive (which Syncthing replicates) only regular .md files, a link only
// when it leads inside the client's folder (~/.claude or
// CLAUDE_CONFIG_DIR), each with its secrets hidden as remember hides
// them; every other file is reported skipped, with why.
func TestConnectImportsOnlyTheClientsMemoryFiles(t *testing.T) {
	for _, configDir := range []bool{false, true} {
		t.Run(fmt.Sprintf("CLAUDE_CONFIG_DIR=%v", configDir), func(t *testing.T) {
			o := testOptions(t, "dwight")
			root := filepath.Join(o.Scope.Home, ".claude")
			if configDir {
				root = filepath.Join(o.Scope.Home, "cc")
				o.Scope.ClaudeConfigDir = root
			}
			memDir := filepath.Join(o.Scope.Home, "hive", "agents", "dwight", hive.ClientMemoryDirName("claude-code", "laptop"))
			o.Install.MemoryDir = memDir
			mem := filepath.Join(root, "projects", "-home-dwight-app", "memory")
			cred := secretstest.Ten()[1]
			write(t, filepath.Join(mem, "MEMORY.md"), "- [ci](ci.md)\n")
			write(t, filepath.Join(mem, "ci.md"), cred.Note+"\n")
			write(t, filepath.Join(mem, "notes.txt"), "not memory\n")
			write(t, filepath.Join(root, "shared", "inside.md"), "- linked from inside\n")
			write(t, filepath.Join(root, ".credentials.json"), "{}\n")
			write(t, filepath.Join(o.Scope.Home, ".ssh", "id_ed25519.md"), "a key\n")
			for link, to := range map[string]string{
				"inside.md":  filepath.Join(root, "shared", "inside.md"),
				"outside.md": filepath.Join(o.Scope.Home, ".ssh", "id_ed25519.md"),
				"escape.md":  filepath.Join("..", "..", "..", "..", ".ssh", "id_ed25519.md"),
				"creds.md":   filepath.Join(root, ".credentials.json"),
			} {
				if err := os.Symlink(to, filepath.Join(mem, link)); err != nil {
					t.Fatal(err)
				}
			}
			write(t, filepath.Join(root, "settings.json"), "{}\n")

			res, err := Connect("claude-code", o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Memory == nil {
				t.Fatalf("no memory imported: %+v", res)
			}
			in := filepath.Join(memDir, "imported", "-home-dwight-app")
			if got := read(t, filepath.Join(in, "inside.md")); got != "- linked from inside\n" {
				t.Errorf("a link inside the client's folder imported as %q", got)
			}
			ci := read(t, filepath.Join(in, "ci.md"))
			for _, sec := range cred.Secrets {
				if strings.Contains(ci, sec) {
					t.Errorf("the secret was copied into the hive as typed: %q", ci)
				}
			}
			if !strings.Contains(ci, "[redacted: "+cred.Kind+"]") || !strings.Contains(ci, cred.Before) {
				t.Errorf("ci.md in the hive: %q", ci)
			}
			hidden := map[string]int{}
			for _, c := range res.Memory.Imported {
				hidden[filepath.Base(c.From)] = c.SecretsHidden
			}
			if hidden["ci.md"] != 1 || hidden["MEMORY.md"] != 0 || len(hidden) != 3 {
				t.Errorf("imported: %+v", res.Memory.Imported)
			}
			skipped := map[string]string{}
			for _, sk := range res.Memory.Skipped {
				skipped[filepath.Base(sk.From)] = sk.Reason
			}
			if len(skipped) != 4 || !strings.Contains(skipped["creds.md"], "not a .md file") || !strings.Contains(skipped["outside.md"], "outside") || !strings.Contains(skipped["escape.md"], "outside") || !strings.Contains(skipped["notes.txt"], ".md") {
				t.Errorf("skipped: %+v", res.Memory.Skipped)
			}
			for _, name := range []string{"outside.md", "escape.md", "creds.md", "notes.txt"} {
				if _, err := os.Lstat(filepath.Join(in, name)); err == nil {
					t.Errorf("%s was copied into the hive", name)
				}
			}
			b, _ := json.Marshal(res)
			if !strings.Contains(string(b), `"skipped":[{"from":`) || !strings.Contains(string(b), `"secrets_hidden":1`) {
				t.Errorf("--json lacks skipped or secrets_hidden: %s", b)
			}
			// Connecting again finds the hidden copy unchanged.
			res, err = Connect("claude-code", o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Memory == nil || len(res.Memory.Imported) != 0 || res.Memory.Unchanged != 3 {
				t.Errorf("reconnect: %+v", res.Memory)
			}
		})
	}
}

// TestConnectReportsALinkedMemoryFolder: a project whose memory/ folder
// is a symlink is followed when it leads inside the client's folder,
// and otherwise skipped and reported with why, never silently.
func TestConnectReportsALinkedMemoryFolder(t *testing.T) {
	o := testOptions(t, "dwight")
	root := filepath.Join(o.Scope.Home, ".claude")
	memDir := filepath.Join(o.Scope.Home, "hive", "agents", "dwight", hive.ClientMemoryDirName("claude-code", "laptop"))
	o.Install.MemoryDir = memDir
	projects := filepath.Join(root, "projects")
	write(t, filepath.Join(root, "kept", "MEMORY.md"), "- kept inside\n")
	write(t, filepath.Join(o.Scope.Home, "elsewhere", "MEMORY.md"), "- kept outside\n")
	for project, to := range map[string]string{
		"-home-dwight-in":   filepath.Join(root, "kept"),
		"-home-dwight-out":  filepath.Join(o.Scope.Home, "elsewhere"),
		"-home-dwight-gone": filepath.Join(o.Scope.Home, "gone"),
	} {
		if err := os.MkdirAll(filepath.Join(projects, project), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(to, filepath.Join(projects, project, "memory")); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(root, "settings.json"), "{}\n")
	res, err := Connect("claude-code", o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Memory == nil {
		t.Fatalf("no memory: %+v", res)
	}
	if got := read(t, filepath.Join(memDir, "imported", "-home-dwight-in", "MEMORY.md")); got != "- kept inside\n" {
		t.Errorf("a memory folder linked inside ~/.claude imported as %q", got)
	}
	if _, err := os.Lstat(filepath.Join(memDir, "imported", "-home-dwight-out")); err == nil {
		t.Error("a memory folder linked outside ~/.claude was imported")
	}
	skipped := map[string]string{}
	for _, sk := range res.Memory.Skipped {
		skipped[sk.From] = sk.Reason
	}
	if r := skipped[filepath.Join(projects, "-home-dwight-out", "memory")]; !strings.Contains(r, "outside") {
		t.Errorf("the link out is not reported: %+v", res.Memory.Skipped)
	}
	if r := skipped[filepath.Join(projects, "-home-dwight-gone", "memory")]; !strings.Contains(r, "dangling") {
		t.Errorf("the dangling link is not reported: %+v", res.Memory.Skipped)
	}
	if len(res.Memory.Imported) != 1 || len(skipped) != 2 {
		t.Errorf("imported %+v, skipped %+v", res.Memory.Imported, res.Memory.Skipped)
	}
}

// TestImportWritesNothingOutsideTheHive: a folder of the hive's memory
// folder that another user of the hive made a link to a folder of the
// person's own gets no copy: the copies are made through a root of the
// memory folder, which follows no link out.
func TestImportWritesNothingOutsideTheHive(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, importedDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, importedDir, "proj")); err != nil {
		t.Fatal(err)
	}
	copies := []Copy{{From: "/src/proj/memory/notes.md", To: filepath.Join(dir, importedDir, "proj", "notes.md")}}
	made, err := doImport(dir, copies, [][]byte{[]byte("- a note\n")})
	if err == nil || len(made) != 0 {
		t.Errorf("import through a link out of the hive: made %v, err %v; want none and an error", made, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("outside the hive: %d entries, want none", len(entries))
	}
}
