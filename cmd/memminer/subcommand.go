package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// requireSubcommand makes cmd, a group of subcommands, a usage error when
// called bare or with an unknown subcommand, naming the valid ones; cobra
// would print the help and exit 0.
func requireSubcommand(cmd *cobra.Command) {
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unknown %s subcommand %q (want: %s)", groupName(c), args[0], subcommandNames(c))
		}
		return nil
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error {
		return usagef("%s needs a subcommand: %s", groupName(c), subcommandNames(c))
	}
}

// groupName is cmd's path without the program's name, which the error's
// "memminer: " prefix already says.
func groupName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

func subcommandNames(cmd *cobra.Command) string {
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return strings.Join(names, ", ")
}

// requireShell applies requireSubcommand to cobra's completion command,
// which cobra otherwise adds only as the command line is run.
func requireShell(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			requireSubcommand(c)
		}
	}
}

// requireHelpTopic makes `memminer help TOPIC` with an unknown topic a
// usage error naming the commands; cobra's help command prints "Unknown
// help topic" and the usage, and exits 0.
func requireHelpTopic(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() != "help" {
			continue
		}
		c.Run = nil
		c.RunE = func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				return usagef("unknown help topic %q (want: %s)", strings.Join(args, " "), subcommandNames(c.Root()))
			}
			return cmd.Help()
		}
	}
}
