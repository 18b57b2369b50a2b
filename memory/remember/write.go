package remember

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memminer/memminer/internal/backoff"
	"github.com/memminer/memminer/memory/markdown"

	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/memory/memfile"
	"github.com/memminer/memminer/memory/secrets"
	"github.com/memminer/memminer/palace"
)

// attempts is how often Remember reads, edits and writes a file before it
// gives up on one other writers keep changing; between attempts it waits
// a jittered, growing pause (newBackoff), about 3 s in all.
const attempts = 10

// newBackoff is the pause between two attempts at a file that changed:
// 10 ms doubling up to 1 s, jittered so that writers that collided do not
// collide again.
func newBackoff() *backoff.Backoff { return backoff.New(10*time.Millisecond, time.Second) }

// retryable reports whether err means the file changed under the write:
// read it again and redo the edit.
func retryable(err error) bool {
	return errors.Is(err, memfile.ErrChanged) || errors.Is(err, memfile.ErrReplaced)
}

// write edits the machine's memory file: the new note appended at its
// end with one O_APPEND write when that is all that changes (no rename, so
// no other appender's line is lost), else the file rewritten atomically
// (memfile.Write). It sets res.Line and res.Hash. Notes superseded in other
// files are marked afterwards, by markOthers.
func write(ctx context.Context, t target, snap memfile.Snapshot, heading string, item memfile.Item, old []palace.Note, date string, maxFile int64, res *Result) error {
	data := snap.Data
	if !snap.Exists {
		data = []byte(OwnedFileStart + "# " + t.wing + "'s memory\n\n")
		if t.inbox {
			data = []byte(inbox.Title(t.wing) + "\n\n")
		}
	}
	edited := false
	for _, n := range old {
		if n.Source != t.file {
			continue
		}
		var err error
		if data, err = memfile.MarkSuperseded(data, n.Line, date); err != nil {
			return fmt.Errorf("remember: supersede %s:%d: %w", t.rel, n.Line, err)
		}
		edited = true
	}
	out, line, err := memfile.Append(data, section(heading, t.inbox), item)
	if err != nil {
		return fmt.Errorf("remember: %s: %w", t.rel, err)
	}
	if governedByHeading(out, line) && !t.inbox {
		// The section would hide or mark the new note at once
		// (## Superseded, ## Archive): refused, whether asked for or
		// the ## Notes of a file that holds it under such a section. (An
		// inbox item waits whatever its heading: govern.Classify.)
		if heading == "" {
			heading = NotesHeading
		}
		return badRequest("--heading %q: governance reads the notes under it as superseded or stale, so the note would be hidden the moment it is written; choose another heading", heading)
	}
	if int64(len(out)) > maxFile {
		return badRequest("%s would grow past max_file_bytes (%d bytes) and stop being mined; split it", t.rel, maxFile)
	}
	ctx = memfile.Describe(ctx, t.wing, "remember: "+memfile.FirstWords(item.Text))
	if !edited && bytes.HasPrefix(out, snap.Data) {
		// Lines another appender added since the read may come before
		// the note's, when it is a plain item at the end of the file.
		tail := out[len(snap.Data):]
		items := strings.Join(item.Lines(), "\n") + "\n"
		afterLines := heading == "" && snap.Exists && string(bytes.ReplaceAll(tail, []byte("\r\n"), []byte("\n"))) == items
		err = memfile.AppendEnd(ctx, snap, tail, afterLines)
	} else {
		err = memfile.Write(ctx, snap, out)
	}
	if err != nil {
		return err
	}
	res.Line, res.Hash = line, memfile.Hash(out)
	// Another appender may have written between the check and the write:
	// the note's line is where the file holds it now. Not there at all,
	// another program rewrote the file in place under the write (an
	// editor saving its buffer): the note is lost, and the caller reads
	// the file again and appends it again (ErrTruncated is ErrReplaced).
	if now, err := memfile.Read(t.file, maxFile); err == nil {
		l, ok := findItem(now.Data, item)
		if !ok {
			return fmt.Errorf("remember: %s: %w", t.rel, memfile.ErrTruncated)
		}
		res.Line, res.Hash = l, now.Hash
	}
	return nil
}

// markOthers marks the notes of old superseded that lie in other files
// than the machine's own (all of them with own), each file read, edited
// and written again until it stays still (the same backoff as the note's
// own write). Each file must lie inside the agent directory.
func markOthers(ctx context.Context, t target, old []palace.Note, date string, maxFile int64, own bool) error {
	byFile := map[string][]palace.Note{}
	var files []string
	for _, n := range old {
		if n.Source == t.file && !own {
			continue
		}
		if _, ok := byFile[n.Source]; !ok {
			files = append(files, n.Source)
		}
		byFile[n.Source] = append(byFile[n.Source], n)
	}
	for _, file := range files {
		path, err := t.inside(file)
		if err != nil {
			return err
		}
		if err := markFile(ctx, t, path, byFile[file], date, maxFile); err != nil {
			return err
		}
	}
	return nil
}

func markFile(ctx context.Context, t target, path string, notes []palace.Note, date string, maxFile int64) error {
	ctx = memfile.Describe(ctx, t.wing, "remember: supersede "+memfile.FirstWords(notes[0].Text))
	bo := newBackoff()
	for attempt := 1; ; attempt++ {
		s, err := memfile.Read(path, maxFile)
		if err != nil {
			return fmt.Errorf("remember: supersede: %w", err)
		}
		data := s.Data
		for _, n := range notes {
			if !startsNote(data, n) {
				return fmt.Errorf("remember: supersede %s:%d: the note is no longer there (the file was edited); search again", t.relOf(path), n.Line)
			}
			if data, err = memfile.MarkSuperseded(data, n.Line, date); err != nil {
				return fmt.Errorf("remember: supersede %s:%d: %w", t.relOf(path), n.Line, err)
			}
		}
		err = memfile.Write(ctx, s, data)
		if retryable(err) && attempt < attempts {
			if err := backoff.Sleep(ctx, bo.Next()); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("remember: supersede %s: %w", t.relOf(path), err)
		}
		return nil
	}
}

// startsNote reports whether n's first line is still at its line of data.
func startsNote(data []byte, n palace.Note) bool {
	lines := strings.Split(string(data), "\n")
	if n.Line < 1 || n.Line > len(lines) {
		return false
	}
	first, _, _ := strings.Cut(n.Text, "\n")
	// The palace holds a secret hidden, the file as written: what comes
	// before one is compared.
	first, _, _ = strings.Cut(first, secrets.HiddenMark)
	first = strings.TrimSpace(first)
	if r := []rune(first); len(r) > 40 {
		first = string(r[:40])
	}
	return strings.Contains(lines[n.Line-1], first)
}

// findItem returns the 1-based line where the last copy of item's lines
// starts in data.
func findItem(data []byte, item memfile.Item) (int, bool) {
	want := item.Lines()
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := len(lines) - len(want); i >= 0; i-- {
		match := true
		for j, w := range want {
			if strings.TrimRight(lines[i+j], " \t") != w {
				match = false
				break
			}
		}
		if match {
			return i + 1, true
		}
	}
	return 0, false
}

// OwnedFileStart starts the machine's memory file when remember creates
// it: frontmatter, metadata that is never a note, saying at the file's
// top that the file is remember's, as PROTOCOL.md says. remember appends
// to it at any time, so an editor that saves it in place (truncating it
// and writing its buffer back) can take what remember wrote since the
// editor read it. A file that lacks it (written by hand, by an older
// memminer, or brought by Syncthing) is never given it: inserting lines
// at the top would move every line the file's references and an open
// editor's buffer point to, and take a rewrite of the file, the very
// write an in-place save undoes; every byte remember does not mean to
// change is kept.
const OwnedFileStart = "---\nwritten_by: memminer remember, which appends to this file at any time; add notes with it, never in an editor\n---\n"

// NotesHeading is the section a note without a heading goes under.
const NotesHeading = "Notes"

// section is the heading a note is appended under: the one asked for,
// else NotesHeading, a neutral section of its own, so a note never lands
// in whatever section ends the file (## Identity, whose notes wake-up
// reads as the agent's identity, or ## Archive, which governance hides).
// An inbox item without a heading goes at the end of the inbox file;
// approving it writes it to memory under NotesHeading.
func section(heading string, inbox bool) string {
	if heading == "" && !inbox {
		return NotesHeading
	}
	return heading
}

// governedByHeading reports whether the note starting at line of data is
// superseded or stale by its heading path alone.
func governedByHeading(data []byte, line int) bool {
	doc, err := markdown.Parse(data, markdown.MemoryOptions())
	if err != nil {
		return false
	}
	for _, n := range doc.Notes {
		if n.Line == line {
			return govern.HeadingHides(n.Heading)
		}
	}
	return false
}
