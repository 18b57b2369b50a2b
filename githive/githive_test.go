package githive_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/githive"
	"github.com/memminer/memminer/githive/gittest"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/markdown"
)

// repo makes a Git work tree holding a hive, with git's environment set
// for this process.
func repo(t *testing.T) string {
	t.Helper()
	gittest.Require(t)
	tmp := t.TempDir()
	gittest.Setenv(t, tmp)
	dir := filepath.Join(tmp, "hive")
	if err := os.MkdirAll(filepath.Join(dir, "agents", "dwight"), 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, nil, "init", "-q")
	return dir
}

func TestSetupIdempotentAndRemove(t *testing.T) {
	dir := repo(t)
	ctx := context.Background()
	attrs := filepath.Join(dir, githive.AttributesFile)
	if err := os.WriteFile(attrs, []byte("*.png binary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	globs, err := hive.NewGlobs([]string{"bots/*"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := githive.Setup(ctx, dir, globs, "memminer")
	if err != nil {
		t.Fatal(err)
	}
	if !res.ConfigChanged || !res.AttributesChanged {
		t.Fatalf("first setup changed nothing: %+v", res)
	}
	if got := strings.TrimSpace(gittest.Git(t, dir, nil, "config", "merge.memminer.driver")); got != githive.DriverCommand {
		t.Fatalf("driver = %q, want %q", got, githive.DriverCommand)
	}
	first, _ := os.ReadFile(attrs)
	if !strings.HasPrefix(string(first), "*.png binary\n") {
		t.Fatalf("the user's line was not kept:\n%s", first)
	}
	for path, want := range map[string]string{
		"agents/dwight/memory.md":                                       "memminer",
		"agents/dwight/notes/Extra.MD":                                  "memminer",
		"bots/r2/memory.markdown":                                       "memminer",
		"agents/dwight/memory.sync-conflict-20261204-101010-ABCDEFG.md": "unspecified",
		"agents/dwight/.hidden.md":                                      "unspecified",
		"README.md":                                                     "unspecified",
	} {
		out := gittest.Git(t, dir, nil, "check-attr", "merge", "--", path)
		if got := strings.TrimSpace(out[strings.LastIndex(out, ": ")+2:]); got != want {
			t.Errorf("%s: merge attribute %q, want %q", path, got, want)
		}
	}
	again, err := githive.Setup(ctx, dir, globs, "memminer")
	if err != nil {
		t.Fatal(err)
	}
	if again.ConfigChanged || again.AttributesChanged {
		t.Fatalf("second setup changed something: %+v", again)
	}
	if second, _ := os.ReadFile(attrs); string(second) != string(first) {
		t.Fatalf("second setup rewrote .gitattributes:\n%s\nwas\n%s", second, first)
	}
	if _, err := githive.Remove(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(attrs); string(after) != "*.png binary\n" {
		t.Fatalf("remove left %q", after)
	}
	if out, err := gittest.Try(dir, nil, "config", "merge.memminer.driver"); err == nil {
		t.Fatalf("remove left the driver: %s", out)
	}
	if res, err := githive.Remove(ctx, dir); err != nil || res.ConfigChanged || res.AttributesChanged {
		t.Fatalf("second remove: %+v, %v", res, err)
	}
}

func TestDriverQuotesAPath(t *testing.T) {
	if got, want := githive.Driver("/opt/it's here/memminer"), `'/opt/it'\''s here/memminer' git merge-file %O %A %B %P`; got != want {
		t.Fatalf("Driver = %q, want %q", got, want)
	}
}

func TestSetupOutsideRepo(t *testing.T) {
	gittest.Require(t)
	tmp := t.TempDir()
	gittest.Setenv(t, tmp)
	t.Setenv("GIT_CEILING_DIRECTORIES", tmp)
	if _, err := githive.Setup(context.Background(), tmp, hive.Globs{}, "memminer"); err == nil || !strings.Contains(err.Error(), githive.ErrNotRepo.Error()) {
		t.Fatalf("err = %v, want %v", err, githive.ErrNotRepo)
	}
}

// mergeFiles runs MergeFile on three contents and returns the result.
func mergeFiles(t *testing.T, base, ours, theirs, path string) (string, githive.MergeOutcome) {
	t.Helper()
	dir := t.TempDir()
	names := []string{"base", "ours", "theirs"}
	for i, c := range []string{base, ours, theirs} {
		if err := os.WriteFile(filepath.Join(dir, names[i]), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := githive.MergeFile(context.Background(), filepath.Join(dir, "base"), filepath.Join(dir, "ours"), filepath.Join(dir, "theirs"), path, time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "ours"))
	return string(got), out
}

func TestMergeFile(t *testing.T) {
	const base = "# Dwight\n\n## Facts\n\n- beets are good\n- bears eat beets\n- the office is in Scranton\n"
	tests := []struct {
		name         string
		ours, theirs string
		want         string
		clean        bool
	}{{
		name:   "both add at the end",
		ours:   base + "- schrute farms\n",
		theirs: base + "- battlestar galactica\n",
		want:   base + "- schrute farms\n- battlestar galactica\n",
		clean:  true,
	}, {
		name:   "one removes, the other adds: the base confirms the removal",
		ours:   strings.Replace(base, "- bears eat beets\n", "", 1),
		theirs: base + "- battlestar galactica\n",
		want:   strings.Replace(base, "- bears eat beets\n", "", 1) + "- battlestar galactica\n",
		clean:  true,
	}, {
		name:   "one changes, the other adds",
		ours:   strings.Replace(base, "beets are good", "beets are great", 1),
		theirs: base + "- battlestar galactica\n",
		want:   strings.Replace(base, "beets are good", "beets are great", 1) + "- battlestar galactica\n",
		clean:  true,
	}, {
		name:   "both change one note",
		ours:   strings.Replace(base, "bears eat beets", "bears eat beets and honey", 1),
		theirs: strings.Replace(base, "bears eat beets", "bears eat beets, always", 1),
		want: "# Dwight\n\n## Facts\n\n- beets are good\n<<<<<<< ours\n- bears eat beets and honey\n=======\n" +
			"- bears eat beets, always (conflict: from the copy of the other side of the Git merge, 2026-12-04)\n>>>>>>> theirs\n- the office is in Scranton\n",
	}, {
		name:   "one removes what the other changes",
		ours:   strings.Replace(base, "- bears eat beets\n", "", 1),
		theirs: strings.Replace(base, "bears eat beets", "bears eat beets, always", 1),
		want: "# Dwight\n\n## Facts\n\n- beets are good\n<<<<<<< ours\n=======\n" +
			"- bears eat beets, always (conflict: from the copy of the other side of the Git merge, 2026-12-04)\n>>>>>>> theirs\n- the office is in Scranton\n",
	}, {
		name:   "one changes what the other removes",
		ours:   strings.Replace(base, "bears eat beets", "bears eat beets and honey", 1),
		theirs: strings.Replace(base, "- bears eat beets\n", "", 1),
		want:   "# Dwight\n\n## Facts\n\n- beets are good\n<<<<<<< ours\n- bears eat beets and honey\n=======\n>>>>>>> theirs\n- the office is in Scranton\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, out := mergeFiles(t, base, tt.ours, tt.theirs, "agents/dwight/memory.md")
			if got != tt.want {
				t.Errorf("merged:\n%s\nwant:\n%s", got, tt.want)
			}
			if out.Clean != tt.clean || out.Method != githive.ByNotes {
				t.Errorf("outcome %+v, want clean=%v by notes", out, tt.clean)
			}
			if hive.HasConflictMarkers([]byte(got)) == tt.clean {
				t.Errorf("markers in the result: %v, want %v", !tt.clean, !tt.clean)
			}
			// Every note either side has is in the result, markers aside.
			doc, err := markdown.Parse([]byte(got), markdown.MemoryOptions())
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]bool{}
			for _, n := range doc.Notes {
				have[strings.TrimSuffix(n.Text, " (conflict: from the copy of the other side of the Git merge, 2026-12-04)")] = true
				if strings.Contains(n.Text, "<<<<<<<") || strings.Contains(n.Text, ">>>>>>>") {
					t.Errorf("a marker was parsed as a note: %q", n.Text)
				}
			}
			for _, side := range []string{tt.ours, tt.theirs} {
				sd, _ := markdown.Parse([]byte(side), markdown.MemoryOptions())
				for _, n := range sd.Notes {
					if !have[n.Text] && !removedOnOneSide(base, tt.ours, tt.theirs, n.Text) {
						t.Errorf("note %q of a side is missing", n.Text)
					}
				}
			}
		})
	}
}

// removedOnOneSide reports whether text is a base note one side removed
// and the other left alone: the merge takes the removal.
func removedOnOneSide(base, ours, theirs, text string) bool {
	in := func(s string) bool { return strings.Contains(s, "- "+text+"\n") }
	return in(base) && in(ours) != in(theirs)
}

func TestMergeFileNotMemoryUsesLines(t *testing.T) {
	gittest.Require(t)
	got, out := mergeFiles(t, "a\nb\nc\nd\ne\n", "a\nB\nc\nd\ne\n", "a\nb\nc\nD\ne\n", "agents/dwight/notes.txt")
	if out.Method != githive.ByLines || !out.Clean || got != "a\nB\nc\nD\ne\n" {
		t.Fatalf("got %q, %+v", got, out)
	}
	got, out = mergeFiles(t, "a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n", "agents/dwight/notes.txt")
	if out.Clean || !hive.HasConflictMarkers([]byte(got)) || !strings.Contains(got, "X") || !strings.Contains(got, "Y") {
		t.Fatalf("got %q, %+v", got, out)
	}
}

func TestCommitAndHistory(t *testing.T) {
	dir := repo(t)
	ctx := context.Background()
	file := filepath.Join(dir, "agents", "dwight", "memory.md")
	other := filepath.Join(dir, "agents", "dwight", "scratch.md")
	if err := os.WriteFile(file, []byte("# Dwight\n\n- beets\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("not memminer's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := githive.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := r.Commit(ctx, file, "dwight", "remember: beets"); err != nil || !ok {
		t.Fatalf("commit: %v, %v", ok, err)
	}
	if ok, err := r.Commit(ctx, file, "dwight", "remember: nothing new"); err != nil || ok {
		t.Fatalf("commit without a change: %v, %v", ok, err)
	}
	if err := os.WriteFile(file, []byte("# Dwight\n\n- beets\n- bears\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(ctx, file, "jim", "remember: bears"); err != nil {
		t.Fatal(err)
	}
	log := gittest.Git(t, dir, nil, "log", "--format=%an <%ae>|%s")
	want := "jim <jim@memminer.invalid>|remember: bears\ndwight <dwight@memminer.invalid>|remember: beets\n"
	if log != want {
		t.Fatalf("log:\n%s\nwant:\n%s", log, want)
	}
	if st := gittest.Git(t, dir, nil, "status", "--porcelain"); !strings.Contains(st, "?? agents/dwight/scratch.md") {
		t.Fatalf("the file memminer did not write was touched: %q", st)
	}
	h, err := r.History(ctx, file, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h[0].Subject != "remember: bears" || h[0].Author != "jim" {
		t.Fatalf("history of line 4: %+v", h)
	}
	h, err = r.History(ctx, file, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h[0].Subject != "remember: beets" {
		t.Fatalf("history of line 3: %+v", h)
	}
	if h, err := r.History(ctx, other, 1, 1); err != nil || len(h) != 0 {
		t.Fatalf("history of an untracked file: %+v, %v", h, err)
	}
}
