package mine

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/secrets/secretstest"
)

// TestClientMemoryIsTheClients: a client's memory folder in an agent
// directory is mined into the agent's wing, its notes recorded as the
// client's; the agent's other files stay the agent's, and so does a
// folder of that name anywhere else. Secrets in them are hidden as in
// any file.
func TestClientMemoryIsTheClients(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "hive")
	folder := hive.ClientMemoryDirName("claude-code", "laptop")
	writeFile(t, h, "agents/dwight/memory.laptop.md", "- Deploys go from the release branch.\n")
	writeFile(t, h, "agents/dwight/"+folder+"/MEMORY.md", "- [db](db.md) — where Postgres runs\n")
	writeFile(t, h, "agents/dwight/"+folder+"/db.md", "---\nname: db\ntype: project\n---\nProduction Postgres runs on db-2.\n")
	writeFile(t, h, "agents/dwight/"+folder+"/imported/-home-dwight-app/MEMORY.md", "- The app's tests need Docker.\n")
	writeFile(t, h, "agents/dwight/notes/"+folder+"/x.md", "- A folder of the name, deeper down.\n")
	secret := secretstest.Ten()[1]
	writeFile(t, h, "agents/dwight/"+folder+"/ci.md", "---\nname: ci\n---\n"+secret.Note+"\n")
	p := openPalace(t, filepath.Join(dir, "palace"), &embedtest.Hashing{ID: "m"})
	sum := mineT(t, p, h, Options{})
	want := map[string]string{
		"Deploys go from the release branch.": "dwight",
		"[db](db.md) — where Postgres runs":   "claude-code",
		"Production Postgres runs on db-2.":   "claude-code",
		"The app's tests need Docker.":        "claude-code",
		"A folder of the name, deeper down.":  "dwight",
	}
	got := map[string]string{}
	for _, n := range p.Notes("dwight") {
		got[n.Text] = n.Agent
		// The client's files are held to the secrets rules as any file.
		if secret.In(n.Text) {
			t.Errorf("note %q stores the secret", n.Text)
		}
	}
	if len(sum.Warnings) != 1 || !strings.Contains(sum.Warnings[0].Err, secret.Kind) {
		t.Errorf("warnings %+v, want one about the %s in ci.md", sum.Warnings, secret.Kind)
	}
	for text, agent := range want {
		if got[text] != agent {
			t.Errorf("note %q: agent %q, want %q (notes: %v)", text, got[text], agent, got)
		}
	}
}
