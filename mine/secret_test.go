package mine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/secrets/secretstest"
	"github.com/memminer/memminer/palace"
)

// TestSecretsAreHiddenNotRewritten: a hand-written memory file holding
// credentials is mined, its notes searchable, but the palace stores each
// secret hidden, the file stays byte for byte, and the mine warns about
// the file naming kinds and lines, never the secrets.
func TestSecretsAreHiddenNotRewritten(t *testing.T) {
	creds := secretstest.Ten()
	var b strings.Builder
	b.WriteString("# Memory\n\n## Ops\n")
	for _, c := range creds {
		b.WriteString("- " + strings.ReplaceAll(c.Note, "\n", "\n  ") + "\n")
	}
	b.WriteString("- Rotate the API key every 90 days.\n")
	gh := creds[1].Secrets[0]
	b.WriteString("\n## Token " + gh + "\n- The heading above holds one too.\n")
	hive := t.TempDir()
	path := writeFile(t, hive, "agents/kim/memory.md", b.String())
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	s := mineT(t, p, filepath.Join(hive, "agents/kim"), Options{})

	if data, err := os.ReadFile(path); err != nil || string(data) != b.String() {
		t.Fatalf("the file changed: %v", err)
	}
	notes := p.Notes("kim")
	// The private key's note is long, and cut in two between its lines.
	if len(notes) != len(creds)+3 {
		t.Fatalf("%d notes mined, want %d", len(notes), len(creds)+3)
	}
	for _, n := range notes {
		for _, c := range creds {
			if c.In(n.Text) || c.In(n.Heading) {
				t.Errorf("note %d stores a %s secret: %q (heading %q)", n.Line, c.Kind, n.Text, n.Heading)
			}
		}
	}
	for _, c := range creds {
		hits, err := p.Search(context.Background(), c.Before, palace.SearchOptions{Results: 1})
		if err != nil || len(hits) == 0 || !strings.Contains(hits[0].Text, "[secret hidden: "+c.Kind+"]") {
			t.Errorf("search %q: %v, %v; want the note with its %s hidden", c.Before, hits, err, c.Kind)
		}
	}
	if hits, _ := p.Search(context.Background(), "rotate API key", palace.SearchOptions{Results: 1}); len(hits) == 0 || hits[0].Text != "Rotate the API key every 90 days." {
		t.Errorf("the ordinary note changed: %v", hits)
	}

	var warned []Problem
	for _, w := range s.Warnings {
		if w.Kind == ProblemSecret {
			warned = append(warned, w)
		}
	}
	if len(warned) != 1 || warned[0].Path != path {
		t.Fatalf("warnings %+v, want one about %s", s.Warnings, path)
	}
	for _, c := range creds {
		if !strings.Contains(warned[0].Err, c.Kind+" at line ") || c.In(warned[0].Err) {
			t.Errorf("the warning %q, want %s named and no secret", warned[0].Err, c.Kind)
		}
	}
	if !strings.Contains(warned[0].Err, "github-pat at line 5,") || !strings.Contains(warned[0].Err, "github-pat at line 25)") {
		t.Errorf("the warning %q, want the GitHub tokens at lines 5 and 25", warned[0].Err)
	}
}

// TestSecretAppendedIsHidden: a file that only grew is parsed from its
// last section on, and a secret appended is hidden and warned about at
// its line in the file.
func TestSecretAppendedIsHidden(t *testing.T) {
	hive := t.TempDir()
	const head = "# Memory\n\n## Ops\n- The stapler lives in the annex.\n\n## Later\n- Deploys go out on Tuesdays.\n"
	path := writeFile(t, hive, "agents/kim/memory.md", head)
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	mineT(t, p, filepath.Join(hive, "agents/kim"), Options{})
	c := secretstest.Ten()[3]
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("- " + c.Note + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	bump(t, path)
	s := mineT(t, p, filepath.Join(hive, "agents/kim"), Options{})
	if s.resumed != 1 {
		t.Errorf("resumed %d files, want the grown one", s.resumed)
	}
	for _, n := range p.Notes("kim") {
		if c.In(n.Text) {
			t.Errorf("note %d stores the secret: %q", n.Line, n.Text)
		}
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].Err, c.Kind+" at line 8)") {
		t.Errorf("warnings %+v, want %s at line 8", s.Warnings, c.Kind)
	}
}
