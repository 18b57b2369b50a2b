package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCommandsOpenThePalaceThroughLocal: the commands reach the palace
// through package local (api.Service, or local's Open for a reader of
// it), which takes the lock each access needs and repairs damaged wings;
// no file of the command opens it itself (docs/development.md, "Layout").
func TestCommandsOpenThePalaceThroughLocal(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		palaceName := ""
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "github.com/memminer/memminer/palace" {
				palaceName = "palace"
				if imp.Name != nil {
					palaceName = imp.Name.Name
				}
			}
		}
		if palaceName == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == palaceName && sel.Sel.Name == "Open" {
				t.Errorf("%s: palace.Open: open the palace through package local (app.openPalace, or a.service())", fset.Position(sel.Pos()))
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no file of the command checked")
	}
}
