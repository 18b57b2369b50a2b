package main

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
)

// writeUsage writes cmd's usage: the text of cobra's default usage template,
// with flag descriptions wrapped at helpWidth. It is code rather than a
// template because executing the template cost more than everything else
// `memminer --help` does.
func writeUsage(cmd *cobra.Command) error {
	var b strings.Builder
	b.WriteString("Usage:")
	if cmd.Runnable() {
		fmt.Fprintf(&b, "\n  %s", cmd.UseLine())
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\n  %s [command]", cmd.CommandPath())
	}
	if len(cmd.Aliases) > 0 {
		fmt.Fprintf(&b, "\n\nAliases:\n  %s", cmd.NameAndAliases())
	}
	if cmd.HasExample() {
		fmt.Fprintf(&b, "\n\nExamples:\n%s", cmd.Example)
	}
	if cmd.HasAvailableSubCommands() {
		b.WriteString("\n\nAvailable Commands:")
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				fmt.Fprintf(&b, "\n  %-*s %s", sub.NamePadding(), sub.Name(), sub.Short)
			}
		}
	}
	if cmd.HasAvailableLocalFlags() {
		fmt.Fprintf(&b, "\n\nFlags:\n%s", trimTrailingSpace(cmd.LocalFlags().FlagUsagesWrapped(helpWidth)))
	}
	if cmd.HasAvailableInheritedFlags() {
		fmt.Fprintf(&b, "\n\nGlobal Flags:\n%s", trimTrailingSpace(cmd.InheritedFlags().FlagUsagesWrapped(helpWidth)))
	}
	if cmd.HasHelpSubCommands() {
		b.WriteString("\n\nAdditional help topics:")
		for _, sub := range cmd.Commands() {
			if sub.IsAdditionalHelpTopicCommand() {
				fmt.Fprintf(&b, "\n  %-*s %s", sub.CommandPathPadding(), sub.CommandPath(), sub.Short)
			}
		}
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\n\nUse \"%s [command] --help\" for more information about a command.", cmd.CommandPath())
	}
	b.WriteString("\n")
	_, err := cmd.OutOrStderr().Write([]byte(b.String()))
	return err
}

func trimTrailingSpace(s string) string {
	return strings.TrimRightFunc(s, unicode.IsSpace)
}
