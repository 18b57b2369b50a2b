package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/inproc"
)

const (
	// exitHashMismatch: remember --expect-hash found another version of the file.
	exitHashMismatch = 4
	// exitSecret: the note holds a secret; nothing was written.
	exitSecret = 5
)

func (a *app) rememberCmd() *cobra.Command {
	var (
		req       remember.Request
		wing      string
		fromStdin bool
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "remember TEXT",
		Short: "Append one note to your own memory file, searchable at once",
		Long: `Append TEXT as one dated list item, "- TEXT (added YYYY-MM-DD)", to your
own memory file on this machine: HIVE/agents/<wing>/memory.<machine>.md, or
that file in the directory an agents glob names for that wing. <machine> is
the machine setting (MEMMINER_MACHINE), by default the host name: each
machine writes only its own file, so Syncthing never has two versions of
one to conflict over. The file and its directory are created when missing.
Every byte of the file outside the new lines is kept; a note at the end is
one O_APPEND write, so another appender's line is never lost. Without
--heading the item goes at the end of the file, unless the last section is
one that would hide or mark it (## Superseded, ## Archive, ## Done…): then
it goes under "## Notes".

The wing is --wing or MEMMINER_WING (a harness sets it per agent); remember
never guesses it. The hive is --hive, MEMMINER_HIVE or hive: in the config.

Nothing is written, and remember says why, when:
  - the wing has an open Syncthing conflict copy (exit status 3; --force
    writes anyway and says so);
  - --expect-hash is not the file's hash (exit status 4): read it again;
  - the wing already holds the same fact (the same words, numbers,
    identifiers and negations in the same order; not merely a similar
    sentence): remember
    prints where it is and exits 0 (--allow-duplicate appends anyway);
  - a file to write is a symlink out of the wing's agent directory;
  - TEXT is empty, over max_note_bytes, or not UTF-8 text (exit status 2);
  - TEXT, the heading or a tag holds a secret: a token, key, password or
    private key (exit status 5). remember names its kind and where it is,
    never the secret; --redact writes the note with each one replaced by
    "[redacted: KIND]".

A new note that resembles one of the wing's is written, and remember says
"similar to note ID; use --supersedes ID if it replaces it".

--supersedes REF (a note id from search --json, a unique prefix of one of 6
digits or more, FILE:LINE such as memory.md:12, or a hit number of the last
search) marks the old note "(superseded YYYY-MM-DD)" at the end of its
first line; it stays in the file as history, and search and wake-up leave
it out.

--confidence hypothesis or --risk high sends the note to your inbox,
HIVE/agents/<wing>/inbox.md, instead: it is mined but left out of search,
wake-up, packs and MCP until a person approves it (memminer inbox).

When the daemon serves the palace it writes and mines the file before it
answers; otherwise remember does both itself under the palace lock. Either
way the note is in the next search, and the output is the same. A daemon
that dies while it answers is no failure: remember then finds the note it
wrote, or writes it, once.

Where the item goes, the refusals, duplicates and the JSON: docs/remember.md.`,
		Example: `  memminer remember --wing dwight "db-2 is the primary since the failover"
  memminer remember --wing pam --heading Travel --tag travel "Aisle seats"
  echo "Deploys need two approvals" | memminer remember --stdin --json
  memminer remember --wing dwight --supersedes memory.md:12 "db-3 is primary"
  memminer remember --wing dwight --confidence hypothesis "db-2 may flap"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := rememberText(cmd.InOrStdin(), args, fromStdin, a.cfg.MaxNoteBytes)
			if err != nil {
				return err
			}
			req.Text = text
			if cmd.Flags().Changed("wing") {
				a.cfg.Wing = wing
			}
			w, err := a.ownWing(cmd.Context(), "remember")
			if err != nil {
				return err
			}
			req.Wing = w
			if req.Supersedes, err = a.fullRefs(cmd.Context(), req.Supersedes, "--supersedes", true); err != nil {
				return err
			}
			res, err := a.remember(cmd.Context(), req)
			if errors.Is(err, remember.ErrSecret) {
				return secretError(err, ", or pass --redact to write it with each secret replaced by [redacted: KIND]")
			}
			if err != nil && !errors.Is(err, remember.ErrNotMined) && !errors.Is(err, remember.ErrNotMarked) {
				return rememberError(flagWording(err), req.Wing)
			}
			if len(res.ForcedPast) > 0 {
				fmt.Fprintf(a.stderr, "memminer: wrote past the open conflict copy %s (--force); merge it into the original and delete it\n", strings.Join(res.ForcedPast, ", "))
			}
			if asJSON {
				if werr := writeJSON(a.stdout, res); werr != nil {
					return werr
				}
			} else {
				printRemembered(a.stdout, res)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&wing, "wing", "", "your own wing, the one written to (env MEMMINER_WING, config wing:)")
	settingFlags(f, "hive")
	f.StringVar(&req.Heading, "heading", "", `append under "## HEADING", created at the end of the file when missing`)
	f.StringArrayVar(&req.Tags, "tag", nil, "add #TAG to the note (repeatable)")
	f.BoolVar(&fromStdin, "stdin", false, "read TEXT from standard input")
	f.StringArrayVar(&req.Supersedes, "supersedes", nil, "mark this note superseded: a note id or its first 6+ digits, FILE:LINE, or a hit number of the last search (repeatable)")
	f.StringVar(&req.ExpectHash, "expect-hash", "", "fail with exit status 4 unless the memory file still has this hash (from remember --json or index --json)")
	f.BoolVar(&req.Force, "force", false, "write even though the wing has an open conflict copy")
	f.BoolVar(&req.AllowDuplicate, "allow-duplicate", false, "append even when the wing already holds the same fact")
	f.StringVar(&req.Confidence, "confidence", "verified", "verified, or hypothesis: a hypothesis goes to your inbox until a person approves it")
	f.StringVar(&req.Risk, "risk", "low", "low, or high: a high-risk note goes to your inbox until a person approves it")
	f.StringVar(&req.TTL, "ttl", "", "a verified low-risk note is stale after this long until reviewed: 30d, 2w, 36h")
	f.BoolVar(&req.Redact, "redact", false, `write a note holding a secret with each one replaced by "[redacted: KIND]"`)
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// rememberText is the note's text from the arguments (joined by spaces) or
// standard input; never both.
func rememberText(stdin io.Reader, args []string, fromStdin bool, maxBytes int64) (string, error) {
	if !fromStdin {
		if len(args) == 0 {
			return "", usagef("remember needs TEXT (or --stdin)")
		}
		return strings.Join(args, " "), nil
	}
	if len(args) > 0 {
		return "", usagef("remember takes TEXT or --stdin, not both")
	}
	if maxBytes <= 0 {
		maxBytes = remember.DefaultMaxNoteBytes
	}
	// Read one byte past any sane note: remember itself says it is too long.
	data, err := io.ReadAll(io.LimitReader(stdin, maxBytes+4096))
	if err != nil {
		return "", fmt.Errorf("read standard input: %w", err)
	}
	return string(data), nil
}

// remember writes the note and mines its file.
func (a *app) remember(ctx context.Context, req remember.Request) (remember.Result, error) {
	hive, err := filepath.Abs(a.cfg.Hive)
	if err != nil {
		return remember.Result{}, err
	}
	return a.service().Remember(ctx, api.RememberRequest{Request: req, Hive: hive, MaxNoteBytes: a.cfg.MaxNoteBytes, Machine: a.cfg.Machine})
}

// flagWording words a refused supersedes reference with the command's
// flag and the search that prints note ids and lines; other errors are
// returned as they are.
func flagWording(err error) error {
	var ref *remember.RefError
	if errors.As(err, &ref) {
		return advised(err, "%s", ref.Explain("--supersedes", "search --json"))
	}
	return err
}

// gitMarkersOnly reports whether every open conflict a remember refusal
// names is a file with Git conflict markers rather than a Syncthing copy.
func gitMarkersOnly(err error) bool {
	var ce *remember.ConflictError
	if !errors.As(err, &ce) || len(ce.Copies) == 0 {
		return false
	}
	for _, c := range ce.Copies {
		if hive.IsConflictCopy(c) {
			return false
		}
	}
	return true
}

// secretAdvice is what to do with a note that holds a secret: every hive
// machine and every agent would see it.
const secretAdvice = "remove the credential; store where it lives, not what it is (memory is copied to every machine of the hive and shown to every agent)"

// secretError is a note refused for holding a secret, with the advice and
// more, what else the command offers.
func secretError(err error, more string) error {
	return &codeError{code: exitSecret, msg: fmt.Sprintf("%v\nnothing written: %s%s", err, secretAdvice, more)}
}

// rememberError adds the advice to what remember refused.
func rememberError(err error, wing string) error {
	switch {
	case errors.Is(err, remember.ErrConflict):
		how := "merge the copy into the original and delete it"
		if gitMarkersOnly(err) {
			how = "resolve the Git conflict in it (keep both sides' notes, remove the marker lines, git add)"
		}
		return &codeError{code: exitConflict, msg: fmt.Sprintf("%v\nnothing written; list it with: memminer conflicts --wing %s\n%s, or pass --force to write anyway", err, wing, how)}
	case errors.Is(err, remember.ErrHashMismatch):
		return &codeError{code: exitHashMismatch, msg: fmt.Sprintf("%v\nnothing written; read the file again (memminer index --json prints its hash), then remember", err)}
	case errors.Is(err, remember.ErrSecret):
		return secretError(err, "")
	case errors.Is(err, remember.ErrBadRequest), errors.Is(err, remember.ErrNoHive):
		return &codeError{code: exitUsage, msg: fmt.Sprintf("%v; nothing written", err)}
	case errors.Is(err, remember.ErrOutsideHive):
		return fmt.Errorf("%v; nothing written: an agent writes only inside the hive", err)
	case errors.Is(err, remember.ErrOutsideAgentDir):
		return fmt.Errorf("%v; nothing written", err)
	case errors.Is(err, api.ErrOtherHive):
		return fmt.Errorf("%v; run remember with the daemon's hive, or stop the daemon (memminer stop)", err)
	}
	return err
}

func printRemembered(w io.Writer, res remember.Result) {
	for _, s := range res.Superseded {
		fmt.Fprintf(w, "superseded %s:%d (note %s)\n", s.File, s.Line, s.ID)
	}
	if res.DuplicateOf != nil {
		fmt.Fprintf(w, "already remembered: %s:%d (note %s)\n", res.DuplicateOf.File, res.DuplicateOf.Line, res.DuplicateOf.ID)
		return
	}
	fmt.Fprintf(w, "remembered in %s:%d (note %s)\n", res.File, res.Line, res.ID)
	if res.Pending {
		fmt.Fprintf(w, "it waits for a person's approval: memminer inbox approve %s\n", res.ID)
	}
	if s := res.SimilarTo; s != nil {
		fmt.Fprintf(w, "similar to note %s; use --supersedes %s if it replaces it (%s:%d: %s)\n", s.ID, s.ID, s.File, s.Line, firstLine(s.Text))
	}
}

// firstLine is the first line of a note's text, for a reminder of it.
func firstLine(text string) string {
	line, _, _ := strings.Cut(govern.WithoutAdded(text), "\n")
	return strings.TrimSpace(line)
}

// ownWing is the writer's own wing, for a command that writes into it
// (remember, handoff): never guessed. Without a hive configured, the hive
// is the one the palace mined the wing from.
func (a *app) ownWing(ctx context.Context, verb string) (string, error) {
	if a.cfg.Wing == "" {
		return "", usagef("%s needs your wing: pass --wing ID or set MEMMINER_WING (it is never guessed)", verb)
	}
	w, err := normalizeWing(a.cfg.Wing)
	if err != nil {
		return "", err
	}
	if a.cfg.Hive == "" {
		a.cfg.Hive = a.hiveOfWing(ctx, w)
	}
	if a.cfg.Hive == "" {
		return "", errNoHive()
	}
	return w, nil
}

// hiveOfWing is the hive the palace mined wing from, when the wing's
// agent directory is agents/<id> of a hive there still; "" otherwise.
func (a *app) hiveOfWing(ctx context.Context, wing string) string {
	if !palace.HasWings(a.cfg.Palace) {
		return ""
	}
	p, err := a.openPalace(ctx, nil, inproc.AsIs, []string{wing})
	if err != nil {
		return ""
	}
	defer p.Close()
	for _, root := range p.Roots(wing) {
		if filepath.Base(filepath.Dir(root)) != hive.DefaultDir {
			continue
		}
		dir := filepath.Dir(filepath.Dir(root))
		if fi, err := os.Stat(root); err == nil && fi.IsDir() {
			return dir
		}
	}
	return ""
}
