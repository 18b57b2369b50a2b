package markdown

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/memminer/memminer"

// TestReadersOfNotesDoNotImportTheMiner: the packages that only read a
// memory file's notes reach neither the miner nor, through it, the
// palace, the vector store or an embedder (docs/development.md, Layout).
func TestReadersOfNotesDoNotImportTheMiner(t *testing.T) {
	forbidden := []string{module + "/mine", module + "/palace", module + "/embed", "github.com/philippgille/chromem-go"}
	for _, pkg := range []string{"memory/markdown", "conflicts/merge", "memory/memfile", "githive"} {
		seen := map[string]string{} // import path → the package that imported it
		queue := []string{module + "/" + pkg}
		for len(queue) > 0 {
			path := queue[0]
			queue = queue[1:]
			for _, f := range forbidden {
				if path == f || strings.HasPrefix(path, f+"/") {
					t.Errorf("%s imports %s (through %s)", pkg, path, seen[path])
				}
			}
			rel, ours := strings.CutPrefix(path, module+"/")
			if !ours {
				continue
			}
			p, err := build.ImportDir(filepath.Join("..", "..", filepath.FromSlash(rel)), 0)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for _, imp := range p.Imports {
				if _, ok := seen[imp]; !ok {
					seen[imp] = path
					queue = append(queue, imp)
				}
			}
		}
	}
}
