package remember

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/memminer/memminer/memory/memfile"
)

// TestRememberReappendsWhatAnEditorTruncated: an editor that saves its
// buffer in place (truncates the machine's file and writes what it read
// before the note) right after remember appended loses the note; remember
// sees it gone and appends it again, so what it acknowledges is in the
// file.
func TestRememberReappendsWhatAnEditorTruncated(t *testing.T) {
	const rel, before = "agents/dwight/memory.laptop.md", "# dwight's memory\n\n- Beets grow in the north field (added 2026-11-01)\n"
	f := newFixture(t, map[string]string{rel: before})
	var once sync.Once
	remove := memfile.AddHook(func(_ context.Context, c memfile.Change) {
		once.Do(func() {
			if err := os.WriteFile(c.Path, []byte(before), 0o644); err != nil {
				t.Error(err)
			}
		})
	})
	t.Cleanup(remove)
	res, err := f.remember(t, Request{Wing: "dwight", Text: "The harvest starts in October"})
	if err != nil {
		t.Fatal(err)
	}
	got := f.read(t, rel)
	if strings.Count(got, "The harvest starts in October") != 1 || !strings.HasPrefix(got, before) {
		t.Fatalf("file after the editor's save and remember:\n%s", got)
	}
	if res.Line != 6 || res.ID == "" { // under the ## Notes it added
		t.Errorf("result %+v", res)
	}
}
