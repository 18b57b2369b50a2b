package hive

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestConflictBlocks(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []MarkerBlock
	}{
		{"none", "# A\n\n- x\n", nil},
		{"a block", "- a\n<<<<<<< HEAD\n- b\n=======\n- c\n>>>>>>> branch\n- d\n", []MarkerBlock{{Start: 1, Base: -1, Mid: 3, End: 5}}},
		{"diff3", "<<<<<<< ours\nx\n||||||| base\ny\n=======\nz\n>>>>>>> theirs\n", []MarkerBlock{{Start: 0, Base: 2, Mid: 4, End: 6}}},
		{"crlf and bare markers", "<<<<<<<\r\nx\r\n=======\r\ny\r\n>>>>>>>\r\n", []MarkerBlock{{Start: 0, Base: -1, Mid: 2, End: 4}}},
		{"two blocks", "<<<<<<< a\n=======\n>>>>>>> b\n- x\n<<<<<<< a\n- y\n=======\n>>>>>>> b\n", []MarkerBlock{{0, -1, 1, 2}, {4, -1, 6, 7}}},
		{"longer markers", "<<<<<<<<< a\nx\n=========\ny\n>>>>>>>>> b\n", []MarkerBlock{{0, -1, 2, 4}}},
		{"a setext heading is no marker", "Title\n=======\n\n- x\n", nil},
		{"indented markers are text", "- example:\n  <<<<<<< HEAD\n  =======\n  >>>>>>> b\n", nil},
		{"not closed", "<<<<<<< HEAD\n- b\n=======\n- c\n", nil},
		{"no middle", "<<<<<<< HEAD\n- b\n>>>>>>> x\n", nil},
		{"mismatched lengths", "<<<<<<< a\nx\n========\ny\n>>>>>>> b\n", nil},
		{"a word after the arrows", "<<<<<<<x\n=======\n>>>>>>> b\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ConflictBlocks([]byte(tt.in))
			if !slices.Equal(got, tt.want) {
				t.Errorf("ConflictBlocks = %+v, want %+v", got, tt.want)
			}
			if HasConflictMarkers([]byte(tt.in)) != (len(tt.want) > 0) {
				t.Errorf("HasConflictMarkers disagrees")
			}
		})
	}
}

func TestConflictCopiesFindsMarkers(t *testing.T) {
	hv := t.TempDir()
	mkdirs(t, hv, "agents/pam/memory.md", "agents/jim/memory.md", "agents/jim/.hidden/x.md", "shared/readme.md")
	marked := []byte("- a\n<<<<<<< ours\n- b\n=======\n- c\n>>>>>>> theirs\n")
	for _, p := range []string{"agents/jim/memory.md", "agents/jim/.hidden/x.md", "shared/readme.md"} {
		if err := os.WriteFile(filepath.Join(hv, filepath.FromSlash(p)), marked, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := open(t, hv)
	copies, err := h.ConflictCopies(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(hv, "agents", "jim", "memory.md")
	if len(copies) != 1 || copies[0].Path != want || copies[0].Original != want || !copies[0].Markers || copies[0].Wing != "jim" {
		t.Fatalf("ConflictCopies = %+v, want only jim's memory.md with markers", copies)
	}
	if c, _ := h.ConflictCopies(context.Background(), "pam"); len(c) != 0 {
		t.Fatalf("pam has no markers: %+v", c)
	}
}

func TestMemoryFilePatterns(t *testing.T) {
	g, err := NewGlobs([]string{"bots/*"})
	if err != nil {
		t.Fatal(err)
	}
	memory, not := MemoryFilePatterns(g)
	want := []string{"agents/*/**/*.[mM][dD]", "agents/*/**/*.[mM][aA][rR][kK][dD][oO][wW][nN]", "bots/*/**/*.[mM][dD]", "bots/*/**/*.[mM][aA][rR][kK][dD][oO][wW][nN]"}
	if !slices.Equal(memory, want) {
		t.Errorf("memory = %q, want %q", memory, want)
	}
	if len(not) != 6 {
		t.Errorf("not = %q, want three per glob", not)
	}
}

// readMarkers reads a chunk at a time: a block whose open marker
// straddles two chunks, or starts or ends one, is found as in the whole
// file.
func TestReadMarkersAcrossChunks(t *testing.T) {
	chunk := len(*markerChunks.Get().(*[]byte))
	block := "<<<<<<< ours\n- b\n=======\n- c\n>>>>>>> theirs\n"
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		data func(at int) string
	}{
		{"block", func(at int) string { return strings.Repeat("x", at) + "\n" + block }},
		{"open marker only", func(at int) string { return strings.Repeat("x", at) + "\n<<<<<<< ours\n- b\n" }},
		{"none", func(at int) string { return strings.Repeat("x", at) + "\n- <<<<<< b\n" }},
	} {
		for at := chunk - 10; at <= chunk+2; at++ {
			data := tt.data(at)
			path := filepath.Join(dir, "memory.md")
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readMarkers(f)
			f.Close()
			if want := HasConflictMarkers([]byte(data)); err != nil || got != want {
				t.Errorf("%s at %d: readMarkers = %v, %v; whole file %v", tt.name, at, got, err, want)
			}
		}
	}
}
