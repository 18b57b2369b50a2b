package inbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/markdown"
	"github.com/memminer/memminer/memory/memfile"
	"github.com/memminer/memminer/memory/secrets"
	"github.com/memminer/memminer/palace"
)

// attempts is how often Mark reads and writes before it gives up on a
// file other writers keep changing.
const attempts = 5

// ErrBadDecision is matched by a decision without the person or the reason
// it needs.
var ErrBadDecision = errors.New("bad decision")

// ErrSecret means the item holds a secret, hidden in the palace (package
// secrets): approving it would put the credential in memory, so it is
// not approved.
var ErrSecret = errors.New("the inbox item holds a secret")

// Decision is a person's decision on an inbox item.
type Decision struct {
	// By is who decides; Note why (required to reject) or a remark.
	By, Note string
	// Now is when; its local date is written.
	Now time.Time
}

// clean makes s fit in a marker: one line, no parentheses (they would end
// it), and for a name no colon.
func clean(s string, name bool) string {
	r := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "(", "[", ")", "]")
	s = strings.Join(strings.Fields(r.Replace(s)), " ")
	if name {
		s = strings.ReplaceAll(s, ":", "-")
	}
	return s
}

func (d Decision) check(needNote bool) (Decision, error) {
	d.By, d.Note = clean(d.By, true), clean(d.Note, false)
	switch {
	case d.By == "":
		return d, fmt.Errorf("%w: say who decides", ErrBadDecision)
	case needNote && d.Note == "":
		return d, fmt.Errorf("%w: a rejection needs a note saying why", ErrBadDecision)
	}
	return d, nil
}

// Approval is what approving an item writes into memory: the note's text
// as the agent wrote it, marked approved by whom and when, and the section
// it was under in the inbox ("" above the first section).
func Approval(n palace.Note, d Decision) (text, heading string, err error) {
	if d, err = d.check(false); err != nil {
		return "", "", err
	}
	if found := append(secrets.Hidden(n.Heading), secrets.Hidden(n.Text)...); len(found) > 0 {
		where := make([]string, len(found))
		for i, f := range found {
			where[i] = fmt.Sprintf("%s at line %d", f.Kind, n.Line+f.Line-1)
		}
		return "", "", fmt.Errorf("%w: %s (%s); nothing approved: remove the credential from the file, store where it lives, not what it is, then approve it again",
			ErrSecret, n.Source, strings.Join(where, ", "))
	}
	text = govern.WithoutInboxMarkers(n.Text) + govern.ApprovedMarker(d.Now.Format(time.DateOnly), d.By)
	if d.Note != "" {
		text += " — " + d.Note
	}
	if parts := govern.HeadingParts(n.Heading); len(parts) > 1 {
		heading = parts[len(parts)-1]
	}
	if govern.HeadingHides(heading) {
		// A heading that would hide the approved note in memory (it
		// did not hide the item in the inbox): remember places it.
		heading = ""
	}
	return text, heading, nil
}

// MarkApproved marks item n of its inbox approved into where (FILE:LINE,
// relative to the hive).
func MarkApproved(ctx context.Context, n palace.Note, d Decision, where string, maxBytes int64) error {
	d, err := d.check(false)
	if err != nil {
		return err
	}
	return mark(ctx, n, govern.ApprovedInboxMarker(d.Now.Format(time.DateOnly), d.By, where), maxBytes)
}

// MarkRejected marks item n of its inbox rejected, with why.
func MarkRejected(ctx context.Context, n palace.Note, d Decision, maxBytes int64) error {
	d, err := d.check(true)
	if err != nil {
		return err
	}
	return mark(ctx, n, govern.RejectedInboxMarker(d.Now.Format(time.DateOnly), d.By, d.Note), maxBytes)
}

// mark adds marker at the end of the first line of note n in its inbox,
// through memfile: under the agent directory's lock, atomically, every
// other byte kept. The note is looked up in the file as it is now (it may
// have moved since it was mined); a note no longer there is ErrNoItem.
func mark(ctx context.Context, n palace.Note, marker string, maxBytes int64) error {
	dir := filepath.Dir(n.Source)
	unlock, err := memfile.Lock(ctx, dir)
	if err != nil {
		return fmt.Errorf("inbox: %w", err)
	}
	defer unlock()
	for attempt := 1; ; attempt++ {
		snap, err := memfile.Read(n.Source, maxBytes)
		if err != nil {
			return fmt.Errorf("inbox: %w", err)
		}
		line, err := lineOf(snap.Data, n)
		if err != nil {
			return err
		}
		out, err := memfile.MarkLine(snap.Data, line, marker)
		if err != nil {
			return fmt.Errorf("inbox: %s: %w", n.Source, err)
		}
		err = memfile.Write(ctx, snap, out)
		if errors.Is(err, memfile.ErrChanged) && attempt < attempts {
			continue
		}
		if err != nil {
			return fmt.Errorf("inbox: %s: %w", n.Source, err)
		}
		return nil
	}
}

// lineOf finds the line where note n starts in data: its mined line when
// the note is still there, else the first note with its heading and text.
func lineOf(data []byte, n palace.Note) (int, error) {
	doc, err := markdown.Parse(data, markdown.MemoryOptions())
	if err != nil {
		return 0, fmt.Errorf("inbox: parse %s: %w", n.Source, err)
	}
	// The palace holds a note's secrets hidden (secrets.Hide): so is the
	// file's note compared.
	shown := func(s string) string { return s }
	if len(secrets.Hidden(n.Text)) > 0 || len(secrets.Hidden(n.Heading)) > 0 {
		shown = secrets.Scan(string(data)).Hide
	}
	found := 0
	for _, m := range doc.Notes {
		if shown(m.Text) != n.Text || shown(m.Heading) != n.Heading {
			continue
		}
		if m.Line == n.Line {
			return m.Line, nil
		}
		if found == 0 {
			found = m.Line
		}
	}
	if found == 0 {
		return 0, fmt.Errorf("%s: %w: %s:%d changed since it was mined; list the inbox again", n.ID, ErrNoItem, n.Source, n.Line)
	}
	return found, nil
}
