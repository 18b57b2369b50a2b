package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/clients/connect"
	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
)

// Budgets and bounds of the prompt hook.
const (
	// defaultRecallTokens is the budget of recall's output, in wake-up's
	// estimated tokens.
	defaultRecallTokens = 300
	// maxRecallQueryRunes bounds the prompt searched with: a pasted log
	// should not make the hook slow.
	maxRecallQueryRunes = 2000
	// maxHookInputBytes bounds the hook JSON read from stdin.
	maxHookInputBytes = 4 << 20
)

// hookTimeout is how long a hook may take before it gives up and prints
// nothing: well inside both clients' hook timeouts (60 s and more).
var hookTimeout = 20 * time.Second

func (a *app) recallCmd() *cobra.Command {
	var (
		hook    string
		tokens  int
		preErr  error
		wing    string
		domains domainArgs
	)
	cmd := &cobra.Command{
		Use:   "recall [PROMPT]",
		Short: "Print the notes relevant to a prompt: an agent's prompt hook",
		Long: `Search the hive's memory with PROMPT and print the notes that pass search's
relevance decision, within a small budget (--tokens, 300 by default, counted
as wake-up counts), each with its wing, source, line, date and any
superseded or stale mark. When nothing is relevant it prints nothing.

An agent's recall (its wing from --wing, as connect installs the hook, or
MEMMINER_WING) stays inside its domain and global; --all-domains widens it,
--domain narrows it (docs/domains.md).

With --hook AGENT (` + strings.Join(connect.AgentIDs(), ", ") + `) it is that
client's prompt hook, as memminer connect installs it: the prompt comes
from the hook's JSON on stdin, and any error prints nothing, is logged to
stderr and exits 0, so the prompt is never blocked. It gives up after 20
seconds.

Through the daemon when one serves the palace, otherwise from the palace
directly, like search. Details: docs/connect.md.`,
		Example: `  memminer recall "how do we deploy the web bundle?"
  echo '{"prompt": "who owns db-2?"}' | memminer recall --hook claude-code`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("wing") {
				a.cfg.Wing = wing
			}
			if hook == "" {
				if preErr != nil {
					return preErr
				}
				if len(args) == 0 {
					return usagef("recall needs a PROMPT (or --hook AGENT with the hook's JSON on stdin)")
				}
				out, err := a.recall(cmd.Context(), strings.Join(args, " "), tokens, domains)
				if err != nil {
					return err
				}
				_, err = io.WriteString(a.stdout, out)
				return err
			}
			return a.runHook(cmd, "recall", hook, preErr, func(ctx context.Context, in hookInput) (string, error) {
				if len(args) > 0 {
					in.Prompt = strings.Join(args, " ")
				}
				out, given, err := a.recallGiven(ctx, in.Prompt, tokens, domains)
				if err == nil {
					a.recordRecalled(hook, in.SessionID, given)
				}
				return out, err
			})
		},
	}
	a.hookable(cmd, &hook, &preErr)
	cmd.Flags().IntVar(&tokens, "tokens", defaultRecallTokens, "budget of the output, in estimated tokens")
	cmd.Flags().StringVar(&wing, "wing", "", "the agent's wing, whose domain recall stays in (env MEMMINER_WING)")
	domainFlags(cmd.Flags(), &domains)
	settingFlags(cmd.Flags(), "hive")
	return cmd
}

// hookable gives cmd the --hook flag and makes a configuration error in
// hook mode a logged no-op rather than a failed hook: preErr receives it.
func (a *app) hookable(cmd *cobra.Command, hook *string, preErr *error) {
	cmd.Flags().StringVar(hook, "hook", "", "run as AGENT's hook ("+strings.Join(connect.AgentIDs(), ", ")+"): JSON on stdin, never fails")
	// The installed hook must never fail on a flag a later memminer
	// dropped; run by a person, an unknown flag is a usage error.
	cmd.FParseErrWhitelist.UnknownFlags = hookMode(a.args)
	cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := a.resolve(cmd); err != nil {
			if *hook == "" {
				return err
			}
			*preErr = err
		}
		return nil
	}
}

// hookMode reports whether the command line args run a command as a
// client's hook (--hook AGENT, or --hook=AGENT).
func hookMode(args []string) bool {
	for _, arg := range args {
		if arg == "--" {
			return false
		}
		if arg == "--hook" || strings.HasPrefix(arg, "--hook=") {
			return true
		}
	}
	return false
}

// hookInput is the part of a client's hook JSON the hooks read; Claude
// Code and Codex both send these keys.
type hookInput struct {
	Event  string `json:"hook_event_name"`
	Prompt string `json:"prompt"`
	// TranscriptPath and SessionID name the session's transcript and
	// the session: what capture reads.
	TranscriptPath string `json:"transcript_path"`
	SessionID      string `json:"session_id"`
	// StopHookActive is set on a Stop that follows one a hook blocked:
	// the agent is already doing what a Stop hook asked.
	StopHookActive bool `json:"stop_hook_active"`
	// Cwd, ToolName and ToolInput are a PreToolUse hook's: where the
	// agent runs, and the tool it is about to call (a shell's command).
	Cwd       string `json:"cwd"`
	ToolName  string `json:"tool_name"`
	ToolInput struct {
		Command shellCommand `json:"command"`
	} `json:"tool_input"`
	// LastAssistantMessage is the text of the agent's last message, on a
	// Stop: the turn the transcript must hold before it is read.
	LastAssistantMessage string `json:"last_assistant_message"`
}

// shellCommand is a shell tool's command: a string (Claude Code's Bash),
// or argv (a list), joined with spaces.
type shellCommand string

// UnmarshalJSON reads a string, a list of strings, or anything else as "".
func (c *shellCommand) UnmarshalJSON(data []byte) error {
	var s string
	if json.Unmarshal(data, &s) == nil {
		*c = shellCommand(s)
		return nil
	}
	var argv []string
	if json.Unmarshal(data, &argv) == nil {
		*c = shellCommand(strings.Join(argv, " "))
	}
	return nil
}

// runHook runs f as agent's hook: it reads the hook JSON from stdin, and
// prints what f returns; any failure prints nothing on stdout, one line
// on stderr, and exits 0, so the agent's session goes on untouched.
func (a *app) runHook(cmd *cobra.Command, name, agent string, preErr error, f func(context.Context, hookInput) (string, error)) error {
	err := preErr
	var out string
	var in hookInput
	if err == nil {
		if _, ok := connect.Lookup(agent); !ok {
			err = fmt.Errorf("--hook: unknown agent %q (want: %s)", agent, strings.Join(connect.AgentIDs(), ", "))
		}
	}
	if err == nil {
		// The timeout bounds the read too: a client that never closes
		// stdin must not hold the prompt past it.
		ctx, cancel := context.WithTimeout(cmd.Context(), hookTimeout)
		if in, err = readHookInput(ctx, cmd.InOrStdin()); err == nil {
			if ag, _ := connect.Lookup(agent); ag.Prompt != nil {
				in.Prompt = ag.Prompt(in.Prompt)
			}
			out, err = f(ctx, in)
		}
		cancel()
	}
	var empty *emptyPalaceError
	switch {
	case errors.As(err, &empty):
		// Nothing mined yet: nothing to give, nothing wrong.
	case err != nil:
		fmt.Fprintf(a.stderr, "memminer %s --hook %s: %v (nothing given to the agent)\n", name, agent, err)
	default:
		if ag, _ := connect.Lookup(agent); ag.ContextJSON && out != "" && !decisionHooks[name] {
			out = hookContextJSON(in.Event, out)
		}
		_, err = io.WriteString(a.stdout, out)
		if err != nil {
			fmt.Fprintf(a.stderr, "memminer %s --hook %s: %v\n", name, agent, err)
		}
	}
	return nil
}

// decisionHooks are the hooks whose output is already the JSON of a
// decision for the client (capture's block of a Stop, pre-action's ask),
// never context for the model.
var decisionHooks = map[string]bool{"capture": true, "pre-action": true}

// hookContextJSON is text as a client that reads JSON from its hooks
// takes context for the model.
func hookContextJSON(event, text string) string {
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{"hookEventName": event, "additionalContext": text}})
	return string(b) + "\n"
}

// readHookInput reads the hook's JSON from r until EOF, or fails when ctx
// ends first (the read is left to the process's exit).
func readHookInput(ctx context.Context, r io.Reader) (hookInput, error) {
	var in hookInput
	type read struct {
		data []byte
		err  error
	}
	done := make(chan read, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(r, maxHookInputBytes+1))
		done <- read{data, err}
	}()
	var data []byte
	select {
	case <-ctx.Done():
		return in, fmt.Errorf("read the hook's input: it did not end within %s: %w", hookTimeout, ctx.Err())
	case got := <-done:
		if got.err != nil {
			return in, fmt.Errorf("read the hook's input: %w", got.err)
		}
		data = got.data
	}
	if len(data) > maxHookInputBytes {
		return in, fmt.Errorf("the hook's input is over %d bytes", maxHookInputBytes)
	}
	if strings.TrimSpace(string(data)) == "" {
		return in, nil
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return in, fmt.Errorf("the hook's input is not JSON: %w", err)
	}
	return in, nil
}

// recall asks the prompt hook's question of the palace (search's ranking
// and relevance, and only notes holding the prompt's words:
// palace.SearchOptions.Prompt) and renders what it gives within the
// budget; "" when it gives nothing, as for most prompts.
func (a *app) recall(ctx context.Context, prompt string, tokens int, domains domainArgs) (string, error) {
	out, _, err := a.recallGiven(ctx, prompt, tokens, domains)
	return out, err
}

// recallGiven is recall, with the notes its output gives as FILE:LINE.
func (a *app) recallGiven(ctx context.Context, prompt string, tokens int, domains domainArgs) (string, []string, error) {
	if tokens < 1 {
		return "", nil, usagef("--tokens must be at least 1, got %d", tokens)
	}
	q := strings.TrimSpace(prompt)
	if q == "" {
		return "", nil, nil
	}
	if r := []rune(q); len(r) > maxRecallQueryRunes {
		q = string(r[:maxRecallQueryRunes])
	}
	res, err := a.search(ctx, searchArgs{Query: q, Results: palace.PromptResults, Prompt: true, domainArgs: domains})
	if err != nil {
		return "", nil, err
	}
	out := renderRecall(res.Results, tokens)
	var given []string
	for _, h := range res.Results {
		ref := fmt.Sprintf("%s:%d", h.Source, h.Line)
		if strings.Contains(out, "("+quote.Inline(h.Source)+fmt.Sprintf(":%d", h.Line)) {
			given = append(given, ref)
		}
	}
	return out, given, nil
}

// recallHeader introduces the notes to the agent, quote.Preamble saying
// they are data.
const recallHeader = "Notes from the hive's shared memory (memminer) that may bear on this prompt.\n" + quote.Preamble

// renderRecall is the one place the prompt hook renders notes for an
// agent's context: a header, then one line per hit, best first, as many
// whole notes as the budget holds (a note cut to fit could drop the part
// that answers), each with its wing, source:line, date and marks. Everything read from the palace goes
// through quote.Inline: a note stays on its line and cannot pose as the
// client's markup (docs/security.md). No hit, or no room for one: "".
func renderRecall(hits []api.Hit, budget int) string {
	used := wakeup.LineTokens(recallHeader)
	var lines []string
	for _, h := range hits {
		text := strings.Join(strings.Fields(h.Text), " ")
		render := func(t string) string {
			return fmt.Sprintf("- [%s] %s (%s:%d%s)", quote.Inline(h.Wing), quote.Inline(t), quote.Inline(h.Source), h.Line, quote.Inline(marksFor(h.Fields, t)))
		}
		line := render(text)
		if used+wakeup.LineTokens(line) > budget {
			break
		}
		lines = append(lines, line)
		used += wakeup.LineTokens(line)
	}
	if len(lines) == 0 {
		return ""
	}
	return recallHeader + "\n" + strings.Join(lines, "\n") + "\n"
}

// wakeupHeader introduces the session-start digest to the agent.
const wakeupHeader = "Wake-up digest of the hive's shared memory (memminer), for this session:\n\n"

// wakeupHook is the session-start hook's output: the digest, introduced.
func (a *app) wakeupHook(ctx context.Context, args wakeupArgs) (string, error) {
	d, err := a.wakeUp(ctx, args)
	if err != nil {
		return "", err
	}
	md := d.Markdown()
	if md == "" {
		return "", nil
	}
	return wakeupHeader + md, nil
}
