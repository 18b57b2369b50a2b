package wakeup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

func TestIdentityFallbacks(t *testing.T) {
	tests := []struct {
		name      string
		files     []hiveFile
		mine      string // path below the hive to mine; empty means the hive
		readFile  bool
		text      string
		from      string
		notInTale string // a note that is identity, so never story
	}{
		{
			name: "identity.md",
			files: []hiveFile{
				{path: "agents/a/identity.md", content: "# A\nRelease captain for the mobile apps.\n\nSpeaks for the QA team.\n"},
				{path: "agents/a/memory.md", content: "---\nidentity: not this\nrole: nor this\n---\n# A\n## Identity\nNor this paragraph.\n\n## Work\n- Builds ship on Tuesdays.\n"},
			},
			text: "Release captain for the mobile apps. Speaks for the QA team.", from: FromIdentityFile,
			notInTale: "Speaks for the QA team",
		},
		{
			name: "identity.md frontmatter",
			files: []hiveFile{
				{path: "agents/a/identity.md", content: "---\nidentity: Release captain.\n---\n# A\nLonger text that is not the identity.\n"},
				{path: "agents/a/memory.md", content: "# A\n- Builds ship on Tuesdays.\n"},
			},
			text: "Release captain.", from: FromIdentityFile,
			notInTale: "Longer text",
		},
		{
			name: "identity.md beside a single mined file",
			files: []hiveFile{
				{path: "agents/a/identity.md", content: "# A\nRelease captain for the mobile apps.\n"},
				{path: "agents/a/memory.md", content: "---\nrole: mobile\n---\n# A\n- Builds ship on Tuesdays.\n"},
			},
			mine: "agents/a/memory.md", readFile: true,
			text: "Release captain for the mobile apps.", from: FromIdentityFile,
		},
		{
			name: "identity.md beside a single mined file, no disk reads",
			files: []hiveFile{
				{path: "agents/a/identity.md", content: "# A\nRelease captain for the mobile apps.\n"},
				{path: "agents/a/memory.md", content: "---\nrole: mobile\n---\n# A\n- Builds ship on Tuesdays.\n"},
			},
			mine: "agents/a/memory.md",
			text: "mobile", from: FromRole,
		},
		{
			name: "frontmatter identity",
			files: []hiveFile{
				{path: "agents/a/memory.md", content: "---\nidentity: Billing agent; owns invoices.\nrole: billing\n---\n# A\n## About\nNot this.\n\n## Work\n- Invoices go out on the 1st.\n"},
			},
			text: "Billing agent; owns invoices.", from: FromFrontmatter,
			notInTale: "Not this",
		},
		{
			name: "frontmatter identity in another file",
			files: []hiveFile{
				{path: "agents/a/memory.md", content: "# A\n- Invoices go out on the 1st.\n"},
				{path: "agents/a/profile.md", content: "---\nidentity: Billing agent.\n---\n# Profile\n- Likes tidy ledgers.\n"},
			},
			text: "Billing agent.", from: FromFrontmatter,
		},
		{
			name: "frontmatter role",
			files: []hiveFile{
				{path: "agents/a/memory.md", content: "---\nrole: billing\n---\n# A\n## Role\nNot this.\n\n## Work\n- Invoices go out on the 1st.\n"},
			},
			text: "billing", from: FromRole,
		},
		{
			name: "Identity heading",
			files: []hiveFile{
				{path: "agents/a/memory.md", content: "# A\n\n## Work\n- Invoices go out on the 1st.\n\n## Identity\nBilling agent: invoices,\nrefunds and dunning.\n\nA second paragraph.\n"},
			},
			text: "Billing agent: invoices, refunds and dunning.", from: FromHeading,
			notInTale: "second paragraph",
		},
		{
			name: "Role heading",
			files: []hiveFile{
				{path: "agents/a/memory.md", content: "# A\n## role:\nBilling agent.\n\n## Work\n- Invoices go out on the 1st.\n"},
			},
			text: "Billing agent.", from: FromHeading,
		},
		{
			name: "About heading",
			files: []hiveFile{
				{path: "agents/a/memory.md", content: "# A\n## About\nBilling agent.\n## Work\n- Invoices go out on the 1st.\n"},
			},
			text: "Billing agent.", from: FromHeading,
		},
		{
			name: "none",
			files: []hiveFile{
				{path: "agents/a/memory.md", content: "# A\n## Work\n- Invoices go out on the 1st.\n"},
			},
			text: NoIdentity, from: FromNone,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hive := writeHive(t, tt.files)
			path := hive
			opts := mine.Options{}
			if tt.mine != "" {
				path = filepath.Join(hive, filepath.FromSlash(tt.mine))
				opts.Wing = "a"
			}
			p := minePalace(t, path, nil, opts)
			o := Options{Tokens: 100000}
			if tt.readFile {
				o.ReadFile = ReadFileLimited
			}
			d := build(t, p, o)
			if len(d.Identity) != 1 {
				t.Fatalf("identity has %d lines, want 1", len(d.Identity))
			}
			got := d.Identity[0]
			if got.Wing != "a" || got.Text != tt.text || got.From != tt.from {
				t.Errorf("identity = %+v, want text %q from %q", got, tt.text, tt.from)
			}
			if tt.notInTale != "" && storyHas(d, tt.notInTale) {
				t.Errorf("identity text %q is in the story:\n%s", tt.notInTale, d.Markdown())
			}
		})
	}
}

func TestReadFileLimited(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.md")
	if err := os.WriteFile(big, make([]byte, 3*maxIdentityFileBytes), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := ReadFileLimited(big)
	if err != nil || len(data) != maxIdentityFileBytes+1 {
		t.Errorf("ReadFileLimited(big) = %d bytes, %v; want %d", len(data), err, maxIdentityFileBytes+1)
	}
	if _, err := ReadFileLimited(filepath.Join(dir, "missing.md")); err == nil {
		t.Error("missing file: no error")
	}
	// An identity.md too large to be one is ignored.
	root := filepath.Join(dir, "memory.md")
	sources := []palace.Source{{Path: root}}
	small := func(string) ([]byte, error) { return []byte("# A\nRelease captain.\n"), nil }
	if got, ok := identityFromDisk([]string{root}, sources, small); !ok || got != "Release captain." {
		t.Errorf("identity.md beside memory.md = %q, %v", got, ok)
	}
	huge := func(string) ([]byte, error) { return make([]byte, maxIdentityFileBytes+1), nil }
	if _, ok := identityFromDisk([]string{root}, sources, huge); ok {
		t.Error("oversized identity.md accepted")
	}
}
