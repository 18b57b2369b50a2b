package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestSubcommandsAreTheTree: subcommands names each of the root's
// commands as the command itself is named, every one of them once.
func TestSubcommandsAreTheTree(t *testing.T) {
	a := newApp(nil, nil, nil)
	var names []string
	for _, c := range a.subcommands() {
		if got := c.make().Name(); got != c.name {
			t.Errorf("subcommand %q makes %q", c.name, got)
		}
		names = append(names, c.name)
	}
	var tree []string
	for _, c := range a.rootCmd().Commands() {
		if c.Name() != "help" && c.Name() != "completion" {
			tree = append(tree, c.Name())
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, tree) {
		t.Errorf("subcommands %q, the tree's commands %q", names, tree)
	}
}

// TestRootForIsTheWholeTree: a command line that names a command does
// under rootFor's root of that command alone what it does under the whole
// tree: the help of every command and subcommand, and usage errors.
func TestRootForIsTheWholeTree(t *testing.T) {
	var lines [][]string
	for _, cmd := range allCommands(newApp(nil, nil, nil).rootCmd()) {
		path := strings.Fields(cmd.CommandPath())[1:]
		if len(path) == 0 || path[0] == "help" || path[0] == "completion" {
			continue
		}
		lines = append(lines, append(slices.Clone(path), "--help"), append(slices.Clone(path), "--no-such-flag"))
	}
	lines = append(lines, []string{"mine", "extra", "args", "--dry-run", "--json"}, []string{"search"}, []string{"wake-up", "--tokens", "x"})
	run := func(root func(a *app) *cobra.Command, args []string) string {
		var out, errs bytes.Buffer
		a := newApp(&out, &errs, func(string) string { return "" })
		r := root(a)
		r.SetArgs(args)
		// Only usage is compared: a command that would run is stopped first.
		for _, c := range allCommands(r) {
			if c.RunE != nil || c.Run != nil {
				c.Run, c.RunE = nil, func(c *cobra.Command, args []string) error { return fmt.Errorf("ran %s %q", c.CommandPath(), args) }
			}
		}
		r.PersistentPreRunE = nil
		_, err := r.ExecuteC()
		return fmt.Sprintf("stdout:\n%s\nstderr:\n%s\nerror: %v", out.String(), errs.String(), err)
	}
	for _, args := range lines {
		whole := run(func(a *app) *cobra.Command { return a.rootCmd() }, args)
		alone := run(func(a *app) *cobra.Command { return a.rootFor(args) }, args)
		if whole != alone {
			t.Errorf("memminer %s:\nwith every command:\n%s\nwith the one command:\n%s", strings.Join(args, " "), whole, alone)
		}
	}
	if len(lines) < 60 {
		t.Fatalf("only %d command lines compared", len(lines))
	}
}
