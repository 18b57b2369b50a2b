package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/clients/capture"
	"github.com/memminer/memminer/clients/connect"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/memory/secrets"
)

func (a *app) captureCmd() *cobra.Command {
	var (
		client, session, wing string
		dryRun, asJSON        bool
		hook                  string
		preErr                error
	)
	cmd := &cobra.Command{
		Use:   "capture TRANSCRIPT",
		Short: "Remember the durable directives a user stated in a session",
		Long: `Read an agent session's transcript (--client ` + strings.Join(capture.Clients, " or ") + `), find the
directives the user stated to last — "remember that …", "from now on …",
"always …", "never …", "we decided …", a correction that states a rule —
and remember each in your own wing, as remember would, with where it came
from: "(captured from the user's words: CLIENT session ID)".

They are the user's own words, so they are verified; their risk is read
from what they say. A low-risk one goes into memory with a review date
(the capture_ttl setting, 90 days by default); one that bears on
production, data, money, security, releases or destructive commands is
high-risk and waits in your inbox for a person (memminer inbox). Chatter
("fix the typo", "thanks", a question, "for now …") is never captured.

Every write goes through remember: a directive the wing already holds is
not written again (so capturing the same session twice writes nothing),
and a secret in one is written as "[redacted: KIND]", never as it is.

With --hook AGENT it is that client's SessionEnd and PreCompact hook, as
memminer connect installs it: the transcript and session come from the
hook's JSON on stdin, and nothing is printed on stdout; a failure is one
line on stderr and exit status 0, so the session is never held up.

As the client's Stop hook it captures nothing: when the session did
substantial work (capture_ask_after tool calls, 10 by default) and
remembered nothing, it asks the agent, once per session, to record what
another agent would need next time, each note with its confidence and risk.

The rules, and what is and is not a directive: docs/capture.md.`,
		Example: `  memminer capture --client claude-code --wing dwight SESSION.jsonl
  memminer capture --client codex --wing pam --dry-run --json ROLLOUT.jsonl
  echo '{"transcript_path": "T.jsonl", "session_id": "S"}' |
    memminer capture --hook claude-code --wing dwight`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("wing") {
				a.cfg.Wing = wing
			}
			if hook != "" {
				return a.runHook(cmd, "capture", hook, preErr, func(ctx context.Context, in hookInput) (string, error) {
					if in.TranscriptPath == "" {
						return "", errors.New("the hook's input names no transcript_path")
					}
					if in.Event == "Stop" {
						return a.askToRemember(ctx, hook, in)
					}
					res, err := a.capture(ctx, captureArgs{Client: hook, Session: in.SessionID, Transcript: in.TranscriptPath})
					if n := res.written(); n > 0 {
						fmt.Fprintf(a.stderr, "memminer capture --hook %s: %d directive(s) of session %s remembered (%d waiting in the inbox)\n", hook, n, res.Session, res.pending())
					}
					return "", err
				})
			}
			if preErr != nil {
				return preErr
			}
			if len(args) != 1 {
				return usagef("capture needs the TRANSCRIPT file (or --hook AGENT with the hook's JSON on stdin)")
			}
			if client == "" {
				return usagef("capture needs --client: %s", strings.Join(capture.Clients, " or "))
			}
			res, err := a.capture(cmd.Context(), captureArgs{Client: client, Session: session, Transcript: args[0], DryRun: dryRun})
			if res.Captured == nil {
				res.Captured = []capturedNote{}
			}
			if asJSON {
				if werr := writeJSON(a.stdout, res); werr != nil {
					return werr
				}
			} else {
				printCaptured(a.stdout, res)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&client, "client", "", "the client that wrote TRANSCRIPT: "+strings.Join(capture.Clients, " or "))
	f.StringVar(&session, "session", "", "the session's id, for the provenance (default: the transcript's file name)")
	f.StringVar(&wing, "wing", "", "your own wing, the one written to (env MEMMINER_WING, config wing:)")
	f.BoolVar(&dryRun, "dry-run", false, "print what would be captured; write nothing")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	a.hookable(cmd, &hook, &preErr)
	settingFlags(f, "hive")
	return cmd
}

// captureArgs is one capture.
type captureArgs struct {
	Client, Session, Transcript string
	DryRun                      bool
}

// captureResult is what capture did: its JSON is capture --json.
type captureResult struct {
	Client     string         `json:"client"`
	Session    string         `json:"session"`
	Transcript string         `json:"transcript"`
	Wing       string         `json:"wing"`
	DryRun     bool           `json:"dry_run"`
	Captured   []capturedNote `json:"captured"`
}

// capturedNote is one directive and what became of it.
type capturedNote struct {
	capture.Directive
	// Outcome is "remembered", "pending" (in the inbox), "duplicate"
	// (the wing holds it already), "would remember", "would wait"
	// (--dry-run) or "failed".
	Outcome string `json:"outcome"`
	// Note is the note written, or the one that held it already.
	Note  *remember.NoteRef `json:"note,omitempty"`
	Error string            `json:"error,omitempty"`
}

func (r captureResult) count(outcome string) int {
	n := 0
	for _, c := range r.Captured {
		if c.Outcome == outcome {
			n++
		}
	}
	return n
}

func (r captureResult) written() int { return r.count("remembered") + r.count("pending") }
func (r captureResult) pending() int { return r.count("pending") }

// sessionRe is what a session id keeps in a note: ids are the clients'
// UUIDs, and nothing else they hold should reach a memory file.
var sessionRe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// capture reads args.Transcript as args.Client wrote it and remembers
// each directive in it, one remember each; the first error is returned
// after every directive was tried.
func (a *app) capture(ctx context.Context, args captureArgs) (captureResult, error) {
	res := captureResult{Client: args.Client, Transcript: args.Transcript, DryRun: args.DryRun}
	if _, ok := connect.Lookup(args.Client); !ok {
		return res, usagef("unknown client %q (want: %s)", args.Client, strings.Join(connect.AgentIDs(), ", "))
	}
	w, err := a.ownWing(ctx, "capture")
	if err != nil {
		return res, err
	}
	res.Wing = w
	res.Session = captureSession(args.Session, args.Transcript)
	messages, err := readTranscript(args.Client, args.Transcript)
	if err != nil {
		return res, err
	}
	var first error
	for _, d := range capture.Directives(messages) {
		req := a.captureRequest(w, args.Client, res.Session, d)
		// What capture prints is what remember writes: never a secret.
		shown := d
		shown.Text, _ = secrets.RedactWritten(d.Text)
		c := capturedNote{Directive: shown}
		if args.DryRun {
			c.Outcome = "would remember"
			if req.Risk == govern.HighRisk {
				c.Outcome = "would wait"
			}
			res.Captured = append(res.Captured, c)
			continue
		}
		r, err := a.remember(ctx, req)
		switch {
		case err != nil && !errors.Is(err, remember.ErrNotMined):
			c.Outcome, c.Error = "failed", err.Error()
			if first == nil {
				first = fmt.Errorf("capture %q: %w", d.Text, err)
			}
		case r.DuplicateOf != nil:
			c.Outcome, c.Note = "duplicate", r.DuplicateOf
		default:
			c.Outcome = "remembered"
			if r.Pending {
				c.Outcome = "pending"
			}
			c.Note = &remember.NoteRef{ID: r.ID, Wing: r.Wing, File: r.File, Path: r.Path, Line: r.Line}
		}
		res.Captured = append(res.Captured, c)
	}
	return res, first
}

// captureRequest is the remember request of one directive: verified (the
// user said it), its risk, the capture_ttl review date for a low-risk
// one, where it came from, and any secret redacted.
func (a *app) captureRequest(wing, client, session string, d capture.Directive) remember.Request {
	req := remember.Request{
		Wing:       wing,
		Text:       d.Text + govern.CapturedMarker(client, session),
		Confidence: govern.Verified,
		Risk:       d.Risk,
		Redact:     true,
	}
	if d.Risk == govern.LowRisk && a.cfg.CaptureTTL > 0 && a.cfg.CaptureTTL != govern.Never {
		req.TTL = strconv.FormatInt(int64(a.cfg.CaptureTTL.Hours()), 10) + "h"
	}
	return req
}

// captureSession is the session id a note names: the client's, or the
// transcript's file name, cut to what an id holds.
func captureSession(session, transcript string) string {
	if session == "" {
		base := transcript[strings.LastIndexAny(transcript, `/\`)+1:]
		session = strings.TrimSuffix(base, ".jsonl")
	}
	session = strings.Trim(sessionRe.ReplaceAllString(session, "-"), "-")
	if len(session) > 64 {
		session = session[:64]
	}
	if session == "" {
		session = "unknown"
	}
	return session
}

// readTranscript reads the user's messages from the transcript at path.
func readTranscript(client, path string) ([]string, error) {
	f, err := openTranscript(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	messages, err := capture.Read(client, f)
	if err != nil {
		return nil, fmt.Errorf("read the transcript %s: %w", path, err)
	}
	return messages, nil
}

// openTranscript opens the transcript at path as hivefile.Open does: a
// regular file, checked and read through the one descriptor, no FIFO
// waited on.
func openTranscript(path string) (*os.File, error) {
	f, err := hivefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the transcript: %w", err)
	}
	return f, nil
}

func printCaptured(w io.Writer, res captureResult) {
	if len(res.Captured) == 0 {
		fmt.Fprintf(w, "no directive to capture in session %s\n", res.Session)
		return
	}
	for _, c := range res.Captured {
		where := ""
		if c.Note != nil {
			where = fmt.Sprintf(" %s:%d (note %s)", c.Note.File, c.Note.Line, c.Note.ID)
		}
		if c.Error != "" {
			where = ": " + c.Error
		}
		fmt.Fprintf(w, "%-14s %s-risk %s: %s%s\n", c.Outcome, c.Risk, c.Kind, quote.Inline(c.Text), where)
	}
	if res.DryRun {
		fmt.Fprintln(w, "dry run: nothing written")
	} else if n := res.pending(); n > 0 {
		fmt.Fprintf(w, "%d wait for a person's approval: memminer inbox --wing %s\n", n, res.Wing)
	}
}

// askRequest is what the Stop hook asks of the agent: seed 001's
// "classification is the agent's responsibility".
const askRequest = "memminer: this session did substantial work (%d tool calls) and recorded nothing in the hive's memory. " +
	"Before you stop, record what another agent would need next time: decisions made, causes found, commands that work, pitfalls. " +
	"One fact per note, through memminer's MCP tool remember (or: memminer remember --wing %s --confidence verified|hypothesis --risk low|high \"NOTE\"). " +
	"Give each its confidence (verified only if you checked it, otherwise hypothesis) and its risk (high if acting on it wrongly could harm production, data, money or security). " +
	"Never record a secret. If nothing is worth keeping, just stop."

// askedMaxAge is how long the record that a session was asked is kept.
const askedMaxAge = 30 * 24 * time.Hour

// askToRemember is the Stop hook: the client's decision to block the
// stop with the request, once per session, when the session's work is
// substantial (capture_ask_after tool calls) and nothing was
// remembered; "" otherwise, and always while a Stop hook's request is
// being answered (stop_hook_active).
func (a *app) askToRemember(ctx context.Context, agent string, in hookInput) (string, error) {
	if in.StopHookActive || a.cfg.CaptureAskAfter <= 0 {
		return "", nil
	}
	w, err := a.ownWing(ctx, "capture")
	if err != nil {
		return "", err
	}
	work, err := readStoppedWork(ctx, agent, in.TranscriptPath, in.LastAssistantMessage)
	if err != nil || int64(work.ToolCalls) < a.cfg.CaptureAskAfter || work.Remembered {
		return "", err
	}
	first, err := a.firstAsk(agent, captureSession(in.SessionID, in.TranscriptPath))
	if err != nil || !first {
		return "", err
	}
	out, err := json.Marshal(map[string]string{"decision": "block", "reason": fmt.Sprintf(askRequest, work.ToolCalls, w)})
	return string(out) + "\n", err
}

// firstAsk records that agent's session was asked and reports whether
// it was the first time: the record is a file created exclusively in
// the state directory, so two hooks at once ask once. Records older
// than askedMaxAge are removed.
func (a *app) firstAsk(agent, session string) (bool, error) {
	dir := filepath.Join(filepath.Dir(connect.StateDir(a.getenv, a.home())), "capture", "asked")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, err
	}
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > askedMaxAge {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, agent+"-"+session), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, f.Close()
}

// transcriptLag bounds how long the Stop hook waits for the client to
// write the turn that stops. Claude Code (2.1.197) queues transcript
// entries and appends them every 100 ms, creating the file on its first
// write, and runs the Stop hook without flushing them first: at the end
// of a quick turn, or a quick session, the transcript on disk lacks the
// turn's last entries, or does not exist yet.
const transcriptLag = 2 * time.Second

// readStoppedWork reads the agent's work from the transcript at path
// once it holds the turn that stops: its last message is last (the
// hook's last_assistant_message) or, when the client gives none, the
// file exists. It waits at most transcriptLag, then takes what the
// transcript holds.
func readStoppedWork(ctx context.Context, agent, path, last string) (capture.Work, error) {
	last = strings.TrimSpace(last)
	deadline := time.Now().Add(transcriptLag)
	for {
		work, err := readWork(agent, path)
		switch {
		case err == nil && (last == "" || work.LastMessage == last):
			return work, nil
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return work, err
		case time.Now().After(deadline):
			return work, err
		}
		select {
		case <-ctx.Done():
			return work, err
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// readWork reads the agent's tool calls from the transcript at path.
func readWork(client, path string) (capture.Work, error) {
	f, err := openTranscript(path)
	if err != nil {
		return capture.Work{}, err
	}
	defer f.Close()
	return capture.ReadWork(client, f)
}
