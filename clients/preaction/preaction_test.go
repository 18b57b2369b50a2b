package preaction

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/memory/secrets/secretstest"
)

func TestMatchDefaults(t *testing.T) {
	patterns, err := Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	for cmd, risky := range map[string]bool{
		"rm -rf build/":                           true,
		"rm -fr /tmp/x":                           true,
		"git push --force origin main":            true,
		"git push -f":                             true,
		"git reset --hard HEAD~1":                 true,
		`psql -c "DROP TABLE users"`:              true,
		"kubectl delete pod web-1":                true,
		"terraform apply -auto-approve":           true,
		"helm uninstall web":                      true,
		"ssh deploy@prod-db-1 systemctl restart":  true,
		"rm build/old.log":                        false,
		"git push origin main":                    false,
		"git status":                              false,
		"kubectl get pods":                        false,
		"terraform plan":                          false,
		"echo 'drop the table from the proposal'": false,
	} {
		if _, got := Match(cmd, patterns); got != risky {
			t.Errorf("Match(%q) = %v, want %v", cmd, got, risky)
		}
	}
	if _, err := Compile([]string{"("}); err == nil {
		t.Error("a bad pattern compiled")
	}
}

// TestAppendParse: entries go after what the file holds, byte for byte,
// and read back as written.
func TestAppendParse(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName("laptop"))
	at := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	entries := []Entry{
		{Time: at, Wing: "eng", Session: "s1", Cwd: "/work/api", Command: "rm -rf dist", Matched: "rm", Pack: "deploy", Notes: []string{"agents/eng/memory.md:4", "agents/ops/memory.md:9"}},
		{Time: at.Add(time.Minute), Wing: "eng", Session: "s1", Cwd: "/work/api", Command: "git push --force\n  origin `main`", Matched: "push"},
	}
	if err := Append(path, entries[0]); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if err := Append(path, entries[1]); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(after), string(before)) || !strings.HasPrefix(string(before), header) {
		t.Fatalf("append changed what the file held:\n%s", after)
	}
	got := Parse(after)
	entries[1].Command = "git push --force origin 'main'"
	if len(got) != 2 || !reflect.DeepEqual(got, entries) {
		t.Errorf("Parse = %+v\nwant %+v", got, entries)
	}
	if !IsLog("pre-action-log.laptop.md") || IsLog("memory.md") {
		t.Error("IsLog")
	}
}

// TestAppendFollowsNoLink: a link another hive user puts in place of the
// log (to the person's shell start-up file, say) is refused, and the file
// behind it is left as it was.
func TestAppendFollowsNoLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "bashrc")
	if err := os.WriteFile(target, []byte("export A=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName("laptop"))
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, Entry{Time: time.Now(), Wing: "eng", Command: "rm -rf /"}); err == nil {
		t.Error("appended through a link")
	}
	if data, _ := os.ReadFile(target); string(data) != "export A=1\n" {
		t.Errorf("the file behind the link: %q", data)
	}
}

// TestAppendHidesSecrets: the log replicates with the hive, so a token in
// a logged command is hidden in the file, and Masked hides one a log
// written before still holds.
func TestAppendHidesSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName("laptop"))
	for _, cred := range secretstest.Ten() {
		command := "git push --force https://x:" + cred.Secrets[0] + "@github.com/o/r.git main; " + cred.Note
		if err := Append(path, Entry{Time: time.Now(), Wing: "eng", Command: command, Matched: "push"}); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		if cred.In(string(data)) {
			t.Errorf("%s: the log holds the secret:\n%s", cred.Kind, data)
		}
		if old := (Entry{Command: command}).Masked(); cred.In(old.Command) {
			t.Errorf("%s: Masked shows the secret: %+v", cred.Kind, old)
		}
	}
}
