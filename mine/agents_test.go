package mine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/palace"
)

func TestWingIDs(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/Dwight/memory.md", "- fact\n")
	writeFile(t, hive, "weird name/memory.md", "- fact\n")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	ctx := context.Background()
	for _, bad := range []string{"../x", "a/b", "..", ".x"} {
		if _, err := Mine(ctx, p, filepath.Join(hive, "agents/Dwight"), Options{Wing: bad}); err == nil {
			t.Errorf("wing %q accepted", bad)
		}
	}
	if _, err := Mine(ctx, p, filepath.Join(hive, "weird name"), Options{}); !errors.Is(err, errBadWingID) {
		t.Errorf("unusable directory name: %v", err)
	}
	s := mineT(t, p, filepath.Join(hive, "agents/Dwight/memory.md"), Options{})
	if s.Wings[0] != "dwight" {
		t.Fatalf("wing %v, want case-folded dwight", s.Wings)
	}
	if len(p.Wings()) != 1 {
		t.Fatalf("bad wing ids created wings: %+v", p.Wings())
	}
}

func TestHiveMinesOneWingPerAgent(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/a/memory.md", "- one\n")
	writeFile(t, hive, "agents/b/memory.md", "- two\n")
	writeFile(t, hive, "agents/.trash/memory.md", "- hidden\n")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	s := mineT(t, p, hive, Options{})
	if strings.Join(s.Wings, ",") != "a,b" || s.NotesAdded != 2 {
		t.Fatalf("summary %+v", s)
	}
	roots := p.Wings()[0].Roots
	if len(roots) != 1 || roots[0] != filepath.Join(hive, "agents/a") {
		t.Fatalf("roots %v", roots)
	}
}

func TestAgentsDirectoryAndBadAgentNames(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/a/memory.md", "- one\n")
	writeFile(t, hive, "agents/Bad Name/memory.md", "- skipped\n")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	// The agents/ directory itself is mined one wing per agent too.
	s := mineT(t, p, filepath.Join(hive, "agents"), Options{})
	if strings.Join(s.Wings, ",") != "a" || len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Err, "not valid") {
		t.Fatalf("summary %+v", s)
	}
}

// TestAgentDirectoryIsNoHive: mining one agent directory mines it into its
// wing, even when the agents globs match directories inside it (which,
// relative to the hive, are part of that agent).
func TestAgentDirectoryIsNoHive(t *testing.T) {
	for _, hive := range []bool{true, false} {
		t.Run("hive configured "+strconv.FormatBool(hive), func(t *testing.T) {
			h := t.TempDir()
			writeFile(t, h, "agents/a/memory.md", "- The agent's own note.\n")
			writeFile(t, h, "agents/a/bots/helper/memory.md", "- The helper's note.\n")
			opts := Options{Agents: []string{"bots/*"}}
			if hive {
				opts.Hive = h
			}
			p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
			s := mineT(t, p, filepath.Join(h, "agents/a"), opts)
			if got := strings.Join(s.Wings, ","); got != "a" || s.NotesAdded != 2 {
				t.Fatalf("wings %q, %d notes; want both notes in wing a", got, s.NotesAdded)
			}
		})
	}
}

// TestHiveAgentGlobs: directories the agents globs match are agents like
// agents/<id>, under the same rules; one whose wing id is taken, or that
// lies inside another agent directory, is reported and not mined; a
// symlink that leaves the hive is refused.
func TestHiveAgentGlobs(t *testing.T) {
	type problem struct{ path, want string }
	tests := []struct {
		name     string
		files    []string // below the hive, each holding one note naming it
		links    map[string]string
		agents   []string
		wings    string            // the wings mined, in order
		roots    map[string]string // wing → its one root, below the hive
		problems []problem
		notMined []string // notes never searchable
	}{
		{
			name:     "no globs",
			files:    []string{"agents/a/memory.md", "bots/b/memory.md"},
			wings:    "a",
			roots:    map[string]string{"a": "agents/a"},
			notMined: []string{"bots/b/memory.md"},
		},
		{
			name:     "bots glob",
			files:    []string{"agents/a/memory.md", "bots/b/memory.md", "bots/.hidden/memory.md", "bots/readme.md"},
			agents:   []string{"bots/*"},
			wings:    "a,b",
			roots:    map[string]string{"a": "agents/a", "b": "bots/b"},
			notMined: []string{"bots/.hidden/memory.md", "bots/readme.md"},
		},
		{
			name:     "no agents directory",
			files:    []string{"teams/red/agents/Oscar/memory.md", "teams/red/notes.md"},
			agents:   []string{"teams/*/agents/*"},
			wings:    "oscar",
			roots:    map[string]string{"oscar": "teams/red/agents/Oscar"},
			notMined: []string{"teams/red/notes.md"},
		},
		{
			name:     "same wing id",
			files:    []string{"agents/pam/memory.md", "bots/pam/memory.md", "bots/Kevin/memory.md", "bots/kevin/memory.md"},
			agents:   []string{"bots/*"},
			wings:    "pam,kevin",
			roots:    map[string]string{"pam": "agents/pam", "kevin": "bots/Kevin"},
			problems: []problem{{"bots/kevin", `wing id "kevin" is taken by agent directory bots/Kevin`}, {"bots/pam", `wing id "pam" is taken by agent directory agents/pam`}},
			notMined: []string{"bots/pam/memory.md", "bots/kevin/memory.md"},
		},
		{
			name:     "nested",
			files:    []string{"crew/x/memory.md", "crew/x/sub/y/memory.md"},
			agents:   []string{"crew/*/sub/*", "crew/*"},
			wings:    "x",
			roots:    map[string]string{"x": "crew/x"},
			problems: []problem{{"crew/x/sub/y", "inside agent directory crew/x"}},
		},
		{
			name:     "bad name",
			files:    []string{"agents/a/memory.md", "bots/Bad Name/memory.md"},
			agents:   []string{"bots/*"},
			wings:    "a",
			problems: []problem{{"bots/Bad Name", `agent directory not mined: wing id "Bad Name" is not valid`}},
			notMined: []string{"bots/Bad Name/memory.md"},
		},
		{
			name:     "symlink leaving the hive",
			files:    []string{"agents/a/memory.md", "../outside/evil/memory.md", "bots/b/memory.md"},
			links:    map[string]string{"bots/evil": "../outside/evil"},
			agents:   []string{"bots/*"},
			wings:    "a,b",
			problems: []problem{{"bots/evil", "is a symlink to "}},
			notMined: []string{"../outside/evil/memory.md"},
		},
		{
			name:     "symlink to the hive itself",
			files:    []string{"agents/a/memory.md", "notes/loose.md"},
			links:    map[string]string{"agents/all": "."},
			wings:    "a",
			problems: []problem{{"agents/all", "which is, holds or lies in the directory holding the link"}},
			notMined: []string{"notes/loose.md"},
		},
		{
			name:  "symlink inside the hive is followed, under its own name",
			files: []string{"agents/a/memory.md", "shared/dave/memory.md"},
			links: map[string]string{"agents/carol": "shared/dave"},
			wings: "a,carol",
			roots: map[string]string{"carol": "shared/dave"},
		},
		{
			name:  "agents/ a symlink to where the agents live",
			files: []string{"../data/agents/a/memory.md", "readme.md"},
			links: map[string]string{"agents": "../data/agents"},
			wings: "a",
		},
		{
			name:  "symlinks aliasing an agent directory, or each other",
			files: []string{"agents/a/memory.md", "shared/s/memory.md"},
			links: map[string]string{"agents/a2": "agents/a", "agents/b": "shared/s", "agents/c": "shared/s", "agents/d": "agents"},
			wings: "a,b",
			roots: map[string]string{"a": "agents/a", "b": "shared/s"},
			problems: []problem{
				{"agents/a2", "which is, holds or lies in agent directory agents/a"},
				{"agents/c", "which is, holds or lies in agent directory agents/b"},
				{"agents/d", "which is, holds or lies in the directory holding the link"},
			},
		},
		{
			name:   "a glob matching agents/ itself takes no wing from it",
			files:  []string{"agents/a/memory.md", "bots/b/memory.md"},
			agents: []string{"*"},
			wings:  "a,bots",
			roots:  map[string]string{"a": "agents/a", "bots": "bots"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			hive := filepath.Join(tmp, "hive")
			for _, f := range tt.files {
				writeFile(t, hive, f, "- The note of "+f+" is here.\n")
			}
			for link, target := range tt.links {
				if err := os.Symlink(filepath.Join(hive, target), filepath.Join(hive, link)); err != nil {
					t.Fatal(err)
				}
			}
			p := openPalace(t, filepath.Join(tmp, "palace"), nil)
			s := mineT(t, p, hive, Options{Agents: tt.agents})
			if got := strings.Join(s.Wings, ","); got != tt.wings {
				t.Errorf("wings %q, want %q", got, tt.wings)
			}
			for wing, root := range tt.roots {
				want := filepath.Join(hive, filepath.FromSlash(root))
				for _, w := range p.Wings() {
					if w.ID == wing && (len(w.Roots) != 1 || w.Roots[0] != want) {
						t.Errorf("wing %s: roots %q, want %s", wing, w.Roots, want)
					}
				}
			}
			if len(s.Problems) != len(tt.problems) {
				t.Fatalf("problems %+v, want %+v", s.Problems, tt.problems)
			}
			for i, pr := range tt.problems {
				if got := s.Problems[i]; got.Path != filepath.Join(hive, filepath.FromSlash(pr.path)) || !strings.Contains(got.Err, pr.want) {
					t.Errorf("problem %d: %+v, want %s: %q", i, got, pr.path, pr.want)
				}
			}
			for _, f := range tt.notMined {
				hits, err := p.Search(context.Background(), "note of "+f, palace.SearchOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range hits {
					if strings.Contains(h.Text, f) {
						t.Errorf("%s was mined into wing %s", f, h.Wing)
					}
				}
			}
		})
	}
}

func TestMineNeedsWingOutsideAgentDirectories(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "project/README.md", "# Project\n\nSome prose.\n")
	writeFile(t, root, "project/docs/guide.md", "- a fact\n")
	writeFile(t, root, "examples/hive/agents/pam/memory.md", "- pam's fact\n")
	writeFile(t, root, "examples/other/notes.md", "- loose\n")
	writeFile(t, root, "bots/creed/memory.md", "- creed's fact\n")
	writeFile(t, root, "hive/agents/dwight/notes/extra.md", "- extra\n")
	tests := []struct {
		name string
		path string
		opts Options
		// wing is the wing mined into; "" means ErrNeedsWing.
		wing string
	}{
		{"file in a plain directory", "project/README.md", Options{}, ""},
		{"plain directory", "project/docs", Options{}, ""},
		{"directory of several hives", "examples", Options{}, ""},
		{"directory inside an agent directory", "hive/agents/dwight/notes", Options{Hive: filepath.Join(root, "hive")}, ""},
		{"explicit wing", "project/README.md", Options{Wing: "project"}, "project"},
		{"agent directory", "examples/hive/agents/pam", Options{}, "pam"},
		{"file of an agent directory", "examples/hive/agents/pam/memory.md", Options{}, "pam"},
		{"directory holding memory.md", "bots/creed", Options{}, "creed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
			s, err := Mine(context.Background(), p, filepath.Join(root, tt.path), tt.opts)
			if tt.wing == "" {
				if !errors.Is(err, ErrNeedsWing) || strings.Contains(err.Error(), "--") {
					t.Fatalf("err = %v, want ErrNeedsWing without CLI advice (the CLI adds it)", err)
				}
				if len(p.Wings()) != 0 {
					t.Fatalf("a wing was made up: %+v", p.Wings())
				}
				return
			}
			if err != nil || len(s.Wings) != 1 || s.Wings[0] != tt.wing {
				t.Fatalf("wings %v, err %v; want %s", s.Wings, err, tt.wing)
			}
		})
	}
}

func TestSkippedFilesLeaveNoEmptyWing(t *testing.T) {
	root := t.TempDir()
	bin := writeFile(t, root, "bin/tool.md", "\x00\x01binary\x00")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	s := mineT(t, p, bin, Options{Wing: "bin"})
	if s.FilesSkipped != 1 || len(p.Wings()) != 0 {
		t.Fatalf("skipped %d; wings %+v", s.FilesSkipped, p.Wings())
	}
	// A wing that exists keeps its root when a later file is skipped.
	good := writeFile(t, root, "bin/ok.md", "- fine\n")
	mineT(t, p, good, Options{Wing: "bin"})
	mineT(t, p, bin, Options{Wing: "bin"})
	if ws := p.Wings(); len(ws) != 1 || ws[0].Notes != 1 || len(ws[0].Roots) != 2 {
		t.Fatalf("wings %+v", ws)
	}
}

// errBadWingID is hive.ErrBadWingID, for tests whose hive variable hides
// the package.
var errBadWingID = hive.ErrBadWingID
