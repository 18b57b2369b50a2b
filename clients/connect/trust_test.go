package connect

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
)

// userEdits are what a user (or the client itself) changes in each kind
// of file between two connects, and a sign that the change is still there.
var userEdits = map[string]struct {
	edit func(string) string
	kept string
}{
	".json":  {func(s string) string { return strings.Replace(s, "{", `{"mine": "kept",`, 1) }, `"mine": "kept"`},
	".jsonc": {func(s string) string { return strings.Replace(s, "{", `{"mine": "kept",`, 1) }, `"mine": "kept"`},
	".js":    {func(s string) string { return s + "\n// a line of mine\n" }, "// a line of mine"},
	".toml":  {func(s string) string { return s + "\n[projects.\"/y\"]\ntrust_level = \"trusted\"\n" }, `[projects."/y"]`},
	".md":    {func(s string) string { return s + "\n- a line of mine\n" }, "- a line of mine"},
}

// clientFiles writes every file of agent's user-scope connection with
// content of the user's own, and returns their paths and contents.
func clientFiles(t *testing.T, agent string, o Options) map[string]string {
	t.Helper()
	ag, _ := Lookup(agent)
	files := map[string]string{}
	for _, f := range ag.files(o.Scope, o.Install) {
		content := map[string]string{".json": "{\"numStartups\": 3}\n", ".jsonc": "{\"numStartups\": 3}\n", ".toml": "model = \"gpt-5\"\n",
			".md": instructions, ".js": "export const Mine = async () => ({})\n"}[filepath.Ext(f.path)]
		write(t, f.path, content)
		files[f.path] = content
	}
	return files
}

// TestDisconnectKeepsWhatChangedBetweenConnects: connect, the user edits
// every file, connect again, disconnect: the edits stay, memminer's
// entries go. The backup of the first connect is never put back over
// newer content.
func TestDisconnectKeepsWhatChangedBetweenConnects(t *testing.T) {
	for _, agent := range AgentIDs() {
		t.Run(agent, func(t *testing.T) {
			o := testOptions(t, "dwight")
			files := clientFiles(t, agent, o)
			if _, err := Connect(agent, o); err != nil {
				t.Fatal(err)
			}
			for path := range files {
				write(t, path, userEdits[filepath.Ext(path)].edit(read(t, path)))
			}
			if _, err := Connect(agent, o); err != nil {
				t.Fatal(err)
			}
			if _, err := Disconnect(agent, o); err != nil {
				t.Fatal(err)
			}
			for path := range files {
				got := read(t, path)
				if !strings.Contains(got, userEdits[filepath.Ext(path)].kept) {
					t.Errorf("%s lost the edit made between the connects:\n%s", path, got)
				}
				if strings.Contains(got, "memminer") {
					t.Errorf("%s keeps memminer's entries:\n%s", path, got)
				}
			}
		})
	}
}

// TestConnectKeepsTheUsersOwnMemminerHook: a hook the user wrote that
// runs memminer is the user's, not connect's: connect adds its own
// beside it and disconnect leaves it, whether the file changed since or
// not.
func TestConnectKeepsTheUsersOwnMemminerHook(t *testing.T) {
	const own = `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "memminer wake-up --hook claude-code --wing mine --tokens 500"}]}]}}` + "\n"
	for _, changedSince := range []bool{false, true} {
		o := testOptions(t, "dwight")
		settings := filepath.Join(o.Scope.Home, ".claude", "settings.json")
		write(t, settings, own)
		if _, err := Connect("claude-code", o); err != nil {
			t.Fatal(err)
		}
		if n := len(gjson.Get(read(t, settings), "hooks.SessionStart").Array()); n != 2 {
			t.Errorf("after connect: %d SessionStart hooks, want the user's and connect's:\n%s", n, read(t, settings))
		}
		if changedSince {
			write(t, settings, strings.Replace(read(t, settings), "{", `{"model": "opus",`, 1))
		}
		if _, err := Disconnect("claude-code", o); err != nil {
			t.Fatal(err)
		}
		got := read(t, settings)
		cmds := gjson.Get(got, "hooks.SessionStart.#.hooks.0.command").Array()
		if len(cmds) != 1 || cmds[0].String() != "memminer wake-up --hook claude-code --wing mine --tokens 500" {
			t.Errorf("changed since: %v: the user's own hook after disconnect: %s", changedSince, got)
		}
	}
}

// TestConcurrentConnectsThenDisconnect: several connects at once, then
// one disconnect, leave every file byte for byte as it was (its final
// newline too) and no connection recorded.
func TestConcurrentConnectsThenDisconnect(t *testing.T) {
	for try := range 20 {
		o := testOptions(t, "dwight")
		files := clientFiles(t, "claude-code", o)
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := Connect("claude-code", o); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if _, err := Disconnect("claude-code", o); err != nil {
			t.Fatal(err)
		}
		for path, want := range files {
			if got := read(t, path); got != want {
				t.Fatalf("try %d: %s after disconnect: %q, want %q", try, path, got, want)
			}
		}
		if cs, err := Connections(o.StateDir); err != nil || len(cs) != 0 {
			t.Fatalf("try %d: connections left recorded: %+v, %v", try, cs, err)
		}
	}
}

// TestSymlinkedConfigStaysALink: a configuration file that is a symlink,
// even one whose target is missing, is written through: the link stays a
// link, before and after disconnect.
func TestSymlinkedConfigStaysALink(t *testing.T) {
	for _, dangling := range []bool{false, true} {
		o := testOptions(t, "dwight")
		settings := filepath.Join(o.Scope.Home, ".claude", "settings.json")
		target := filepath.Join(o.Scope.Home, "dotfiles", "claude-settings.json")
		if !dangling {
			write(t, target, claudeSettings)
		}
		if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../dotfiles/claude-settings.json", settings); err != nil {
			t.Fatal(err)
		}
		isLink := func(when string) {
			t.Helper()
			if fi, err := os.Lstat(settings); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("dangling %v: %s: settings.json is no longer a link: %v", dangling, when, err)
			}
		}
		if _, err := Connect("claude-code", o); err != nil {
			t.Fatal(err)
		}
		isLink("after connect")
		if !gjson.Get(read(t, target), "hooks.SessionStart").Exists() {
			t.Errorf("dangling %v: the link's target holds no hooks: %s", dangling, read(t, target))
		}
		if _, err := Disconnect("claude-code", o); err != nil {
			t.Fatal(err)
		}
		isLink("after disconnect")
		if _, err := os.Stat(target); dangling != os.IsNotExist(err) {
			t.Errorf("dangling %v: the target after disconnect: %v", dangling, err)
		}
	}
}
