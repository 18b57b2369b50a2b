package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestUsageMatchesCobraTemplate checks that writeUsage writes, for every
// command, what cobra's default usage template with wrapped flag
// descriptions writes.
func TestUsageMatchesCobraTemplate(t *testing.T) {
	ours := newApp(nil, nil, nil).rootCmd()
	theirs := newApp(nil, nil, nil).rootCmd()
	theirs.SetUsageFunc(nil)
	theirs.SetUsageTemplate(strings.ReplaceAll(theirs.UsageTemplate(), ".FlagUsages", fmt.Sprintf(".FlagUsagesWrapped %d", helpWidth)))
	for _, root := range []*cobra.Command{ours, theirs} {
		root.InitDefaultHelpCmd()
		root.InitDefaultCompletionCmd()
	}
	var walk func(path []string, cmd *cobra.Command)
	n := 0
	walk = func(path []string, cmd *cobra.Command) {
		other, _, err := theirs.Find(path)
		if err != nil || other.CommandPath() != cmd.CommandPath() {
			t.Fatalf("%q: not found in the second tree (%v)", path, err)
		}
		cmd.InitDefaultHelpFlag()
		other.InitDefaultHelpFlag()
		if got, want := cmd.UsageString(), other.UsageString(); got != want {
			t.Errorf("%s: usage\n%s\nwant (cobra's template)\n%s", cmd.CommandPath(), got, want)
		}
		n++
		for _, sub := range cmd.Commands() {
			walk(append(path[:len(path):len(path)], sub.Name()), sub)
		}
	}
	walk(nil, ours)
	if n < 20 {
		t.Fatalf("compared %d commands; the tree has more", n)
	}
}
