package memminer_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/words"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/palace"
)

// texts are notes whose words the parts of memminer must agree on:
// identifiers, possessives, contractions, accents, CJK.
var texts = []string{
	"Postgres 17 runs on db-4; build-04's disk filled with DerivedDataCache.",
	"The web bundle is built with electron-vite and max_client_conn is 400.",
	"Don't restart the agent’s queue workers during business hours.",
	"Le café naïve de la Straße ferme à 18h.",
	"東京駅の改札で待ち合わせ、会議は三時から。",
}

// TestSearchAndDuplicatesAgreeOnWords: every word of a note (package
// words) finds the note in search, and the note's words alone (case and
// punctuation gone) are the same fact to remember's duplicate rule.
func TestSearchAndDuplicatesAgreeOnWords(t *testing.T) {
	ctx := context.Background()
	p, err := palace.Open(ctx, filepath.Join(t.TempDir(), "p"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var notes []palace.Note
	for i, text := range texts {
		notes = append(notes, palace.Note{ID: string(rune('a' + i)), Heading: "Notes", Text: text, Line: i + 1, Agent: "a"})
	}
	if _, err := p.ApplySource(ctx, "a", palace.Source{Path: "/hive/agents/a/memory.md", Agent: "a"}, notes); err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		ws := words.Split(text)
		for _, w := range ws {
			if words.IsStopword(w) {
				continue
			}
			hits, err := p.Search(ctx, w, palace.SearchOptions{Results: 10})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(hits, func(h palace.Hit) bool { return h.ID == notes[i].ID }) {
				t.Errorf("search %q does not find %q", w, text)
			}
		}
		if !remember.SameFact(text, strings.Join(ws, " ")) {
			t.Errorf("%q and its words %q are not the same fact", text, ws)
		}
	}
}

// splitters are the calls that cut text into words or stem them; only
// package words makes them.
var splitters = map[string]bool{"FieldsFunc": true, "Stem": true}

// TestOneWordSplitter: no package but words splits text into words by
// letters or stems a word itself.
func TestOneWordSplitter(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// Test helpers (embedtest's fake model, testutil) and benchmarks
		// may split as they like.
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasSuffix(d.Name(), "test") || d.Name() == "testutil" || path == "bench" || path == filepath.Join("internal", "words")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !splitters[sel.Sel.Name] {
				return true
			}
			// strings.FieldsFunc splitting at letters, or english.Stem.
			if sel.Sel.Name == "Stem" || strings.Contains(exprString(call), "unicode.IsLetter") {
				t.Errorf("%s: %s: words are split and stemmed by package words only", fset.Position(call.Pos()), sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// exprString is the source-like text of the names in e.
func exprString(e ast.Node) string {
	var b strings.Builder
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				b.WriteString(x.Name + "." + sel.Sel.Name + " ")
			}
		}
		return true
	})
	return b.String()
}
