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

// forbidden are what no file of the command calls: the service
// (api.Service, or inproc's Open for a reader of the palace) does it, so
// that it is done the same way with a daemon and without
// (docs/development.md, "Layout"). Package inproc takes the lock each
// access of the palace needs and repairs damaged wings; the open
// conflicts are scanned, their registry read and their copies merged, a
// ref resolved and the inbox listed and decided by the service.
var forbidden = map[string]map[string]string{
	"github.com/memminer/memminer/palace": {
		"Open": "open the palace through package inproc (app.openPalace, or a.service())",
	},
	"github.com/memminer/memminer/conflicts": {
		"ScanHive":        "list the open conflicts with a.service().Conflicts",
		"ScanWings":       "list the open conflicts with a.service().Conflicts",
		"ReadRegistry":    "list the open conflicts with a.service().Conflicts",
		"SetAsideCorrupt": "the service sets a corrupt registry aside",
		"KnownWing":       "the service checks the wing",
		"Select":          "merge with a.service().MergeConflicts",
		"MergeCopies":     "merge with a.service().MergeConflicts",
	},
	"github.com/memminer/memminer/memory/inbox": {
		"List":         "list the inbox with a.service().Inbox",
		"Find":         "decide with a.service().Decide",
		"Approval":     "decide with a.service().Decide",
		"MarkApproved": "decide with a.service().Decide",
		"MarkRejected": "decide with a.service().Decide",
	},
	"github.com/memminer/memminer/service/inproc": {
		"ResolveRef": "find the note with a.service().Show",
	},
	"github.com/memminer/memminer/service/daemonclient": {
		"Path": "reach the daemon through a.service()",
	},
}

// TestCommandsReachThePalaceThroughTheService: no file of the command
// calls what forbidden lists, nor sends the daemon a request of its own
// making (a Get or Post of a path such as "/conflicts": the socket
// client's methods of api.Service send them).
func TestCommandsReachThePalaceThroughTheService(t *testing.T) {
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
		names := map[string]map[string]string{} // local name → forbidden
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if fb, ok := forbidden[path]; ok {
				local := filepath.Base(path)
				if imp.Name != nil {
					local = imp.Name.Name
				}
				names[local] = fb
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok {
					if why, ok := names[id.Name][n.Sel.Name]; ok {
						t.Errorf("%s: %s.%s: %s", fset.Position(n.Pos()), id.Name, n.Sel.Name, why)
					}
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Get" && sel.Sel.Name != "Post") || len(n.Args) < 2 {
					return true
				}
				if lit, ok := n.Args[1].(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.HasPrefix(lit.Value, `"/`) {
					t.Errorf("%s: a request to the daemon's %s made by hand: add it to api.Service", fset.Position(n.Pos()), lit.Value)
				}
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no file of the command checked")
	}
}
