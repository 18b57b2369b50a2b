// Package govern decides what a note's governance is: its status
// (approved, superseded, stale or none), its date, its review date, how
// long it stays fresh and its tags. Mine classifies every note once, when
// it is mined, and the palace keeps the result; search, wake-up, the index
// and MCP read it from there and never parse markdown for it again.
// Whether a note is stale by age is decided at query time (Staleness),
// because the same note ages. docs/governance.md has the rules.
package govern

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Version is the version of the classification rules. A palace records the
// version each file was classified with; mine classifies a file again when
// it differs, so an older palace is upgraded by the next mine.
// Unapproved and the inbox markers left it at 2: they change only notes
// in an agent's inbox or carrying an inbox marker, which no palace mined
// before them holds. Ignoring an inbox item's heading left it at 2 too: a
// palace that holds an item under a "Superseded" heading classifies it
// again at the inbox's next change (every decision rewrites the file).
const Version = 2

// DefaultStaleAfter is how long a note stays fresh when neither its file
// nor the hive's config says otherwise.
const DefaultStaleAfter = 90 * 24 * time.Hour

// Status is a note's governance status.
type Status string

// Statuses. The zero value is no status at all.
const (
	None Status = ""
	// Approved notes state what holds; they rank before an unmarked note
	// stating the same fact.
	Approved Status = "approved"
	// Superseded notes stay in the markdown as history and are left out of
	// search and wake-up.
	Superseded Status = "superseded"
	// Stale notes are marked as possibly out of date; they carry a warning.
	Stale Status = "stale"
	// Unapproved notes wait in an agent's inbox for a person to approve
	// them (InInbox); recall leaves them out unless asked.
	Unapproved Status = "unapproved"
)

// ParseStatus reads a status name as a flag spells it.
func ParseStatus(s string) (Status, error) {
	switch st := Status(strings.ToLower(strings.TrimSpace(s))); st {
	case Approved, Superseded, Stale, Unapproved:
		return st, nil
	}
	return None, fmt.Errorf("unknown status %q (want approved, superseded, stale or unapproved)", s)
}

// Note is the governance of one note, as decided when it was mined.
type Note struct {
	// Status is the note's status; Reason says what gave it (for a stale
	// note it is the warning shown, "marked done").
	Status Status
	Reason string
	// Date is the latest date written in the note or its heading path,
	// else the file's frontmatter date (updated:, date:); zero when none.
	Date time.Time
	// Review is when the note is due for review (review: in the note, else
	// review_date: or next_review: in the frontmatter); zero when none.
	Review time.Time
	// StaleAfter is the file's stale_after: how long its notes stay fresh.
	// Zero means the hive's default; Never means they never go stale by age.
	StaleAfter time.Duration
	// Tags are the note's #tags and its file's frontmatter tags, lower
	// case, sorted, without duplicates.
	Tags []string
}

// Never, as a StaleAfter, means notes never go stale by age.
const Never time.Duration = -1

// File is what a file's frontmatter says about all of its notes.
type File struct {
	Status     Status
	Reason     string
	Date       time.Time
	Review     time.Time
	StaleAfter time.Duration
	Tags       []string
}

// Key identifies f under the current rules (Version): Classify gives a
// note the same governance, field by field, under two Files whose keys
// are equal. A miner records it to reuse the governance of a note whose
// heading and text did not change.
func (f File) Key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "v%d %q %q %d", Version, f.Status, f.Reason, f.StaleAfter)
	for _, t := range []time.Time{f.Date, f.Review} {
		// The location too: Classify copies the times as they are.
		fmt.Fprintf(&b, " %s %q", t.Format(time.RFC3339Nano), t.Location())
	}
	fmt.Fprintf(&b, " %q", f.Tags)
	return b.String()
}

// ParseFile reads the governance keys of a file's frontmatter: status,
// superseded_by, review_date / next_review, stale_after, updated / date and
// tags. Values it cannot read are left out and described in the returned
// warnings, so a typo never stops a file from being mined.
func ParseFile(fm map[string]any) (File, []string) {
	var f File
	var warnings []string
	if len(fm) == 0 {
		return f, nil
	}
	if s, ok := fm["status"]; ok {
		f.Status, f.Reason = statusWord(strings.ToLower(text(s)))
		if f.Status != None {
			f.Reason = "frontmatter status: " + strings.TrimSpace(text(s))
		}
	}
	if _, ok := fm["superseded_by"]; ok {
		f.Status, f.Reason = Superseded, "frontmatter superseded_by"
	}
	for _, k := range []string{"review_date", "next_review"} {
		if v, ok := fm[k]; ok && f.Review.IsZero() {
			d, err := date(v)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("frontmatter %s: %v; ignored", k, err))
				continue
			}
			f.Review = d
		}
	}
	for _, k := range []string{"updated", "date"} {
		if v, ok := fm[k]; ok && f.Date.IsZero() {
			if d, err := date(v); err == nil {
				f.Date = d
			}
		}
	}
	if v, ok := fm["stale_after"]; ok {
		d, err := ParseAge(text(v))
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("frontmatter stale_after: %v; ignored", err))
		} else {
			f.StaleAfter = d
		}
	}
	switch v := fm["tags"].(type) {
	case []any:
		for _, t := range v {
			f.Tags = addTag(f.Tags, text(t))
		}
	case string:
		for _, t := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
			f.Tags = addTag(f.Tags, t)
		}
	}
	return f, warnings
}

// text renders a scalar frontmatter value.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case time.Time:
		return x.Format("2006-01-02")
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// date reads a frontmatter date: YAML's own timestamp or YYYY-MM-DD.
func date(v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t.UTC().Truncate(24 * time.Hour), nil
	}
	s := strings.TrimSpace(text(v))
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a date (want YYYY-MM-DD)", s)
	}
	return d, nil
}

// Classify decides the governance of a note of file f from its text and
// heading path. The strongest status found wins: superseded, then stale,
// then approved; the note's own markers, then its headings', then the
// file's give the reason.
func Classify(f File, heading, text string) Note {
	n := Note{Date: f.Date, Review: f.Review, StaleAfter: f.StaleAfter}
	code := withoutCode(text)
	folded := fold(code)
	take := func(st Status, reason string) {
		if rank(st) > rank(n.Status) {
			n.Status, n.Reason = st, reason
		}
	}
	if f.Status == Unapproved {
		// An inbox item leaves the queue by a person's decision alone
		// (its done marker): no heading, and no word of the agent's
		// that reads as superseded or stale, hides it from the person.
		n.Status, n.Reason = f.Status, f.Reason
		if reason, ok := inboxDone(strings.TrimSpace(code)); ok {
			n.Status, n.Reason = Superseded, reason
		}
	} else {
		take(noteStatus(code, folded))
		take(headingStatus(heading))
		take(f.Status, f.Reason)
	}
	review := mayReview(folded)
	if d, ok := latestDate(code, heading, review); ok {
		n.Date = d
	}
	if review {
		if r, ok := inlineReview(code); ok {
			n.Review = r
		}
	}
	n.Tags = slices.Clone(f.Tags)
	if mayTag(code) {
		for _, m := range tagRe().FindAllStringSubmatch(code, -1) {
			n.Tags = addTag(n.Tags, m[1])
		}
	}
	slices.Sort(n.Tags)
	n.Tags = slices.Compact(n.Tags)
	if len(n.Tags) == 0 {
		n.Tags = nil
	}
	return n
}

// rank orders statuses by strength. Unapproved outranks stale and
// approved: a note in the inbox is no memory, whatever it says of itself,
// until a person approves it; a done inbox item is superseded.
func rank(s Status) int {
	switch s {
	case Superseded:
		return 4
	case Unapproved:
		return 3
	case Stale:
		return 2
	case Approved:
		return 1
	}
	return 0
}

var (
	// Inline supersession: "status: superseded", "(superseded)",
	// "(superseded 2026-11-01)", "(superseded on …)", "superseded by …".
	supersededRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:\bstatus\s*:\s*\**superseded\b|[(\[]\s*superseded(?:\s+(?:on\s+)?\d{4}-\d{2}-\d{2})?\s*[)\]]|\bsuperseded\s+by\b|#superseded\b)`)
	})
	// Inline staleness: "status: deprecated", "(obsolete)", "#stale".
	staleRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:\bstatus\s*:\s*\**(?:stale|deprecated|obsolete|archived|outdated)\b|[(\[]\s*(?:stale|deprecated|obsolete|archived|outdated)\s*[)\]]|#(?:stale|deprecated|obsolete|outdated)\b)`)
	})
	// Inline approval: "status: approved", "(approved)", "#approved".
	approvedRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:\bstatus\s*:\s*\**approved\b|[(\[]\s*approved\s*[)\]]|#approved\b)`)
	})
	// Inline review date: "review: 2026-10-01", "next_review: …".
	reviewRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:next[_ ]review|review[_ ]date|review)\s*:\s*(\d{4}-\d{2}-\d{2})\b`)
	})
	// A tag: "#" at the start or after a space or opening bracket, then a
	// letter; "#123" (an issue) and "a#b" are not tags.
	tagRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|[\s(\[{,;])#(\p{L}[\p{L}\p{N}_/-]*)`) })
)

// fold is text in lower case as far as the (?i) expressions below need:
// a word of ASCII letters they match in text is in fold(text). Their
// case folding maps two runes ToLower leaves to ASCII letters of the
// words: ſ (to s) and the Kelvin sign (which ToLower makes k already).
// A note is given to an expression only when its folded text holds a
// word the expression cannot match without, which most notes do not.
func fold(text string) string {
	return strings.ReplaceAll(strings.ToLower(text), "ſ", "s")
}

// The may functions tell whether an expression can match a note: each
// looks for what the expression cannot match without (folded is
// fold(text)). TestExpressionCues holds them to it.
func maySupersede(folded string) bool { return strings.Contains(folded, "superseded") }
func mayApprove(folded string) bool   { return strings.Contains(folded, "approved") }
func mayReview(folded string) bool    { return strings.Contains(folded, "review") }
func mayTag(text string) bool         { return strings.Contains(text, "#") }
func mayAdded(text string) bool       { return strings.Contains(text, "(added ") }
func mayStale(folded string) bool {
	for _, w := range []string{"stale", "deprecated", "obsolete", "archived", "outdated"} {
		if strings.Contains(folded, w) {
			return true
		}
	}
	return false
}

// noteStatus is the status a note's own text gives it; folded is
// fold(text).
func noteStatus(text, folded string) (Status, string) {
	t := strings.TrimSpace(text)
	if strings.Contains(folded, "(inbox: ") {
		if reason, ok := inboxDone(t); ok {
			return Superseded, reason
		}
	}
	switch {
	case maySupersede(folded) && supersededRe().MatchString(t):
		return Superseded, "marked superseded"
	case len(t) > 4 && strings.HasPrefix(t, "~~") && strings.HasSuffix(t, "~~"):
		return Superseded, "struck through"
	case strings.HasPrefix(t, "[x] ") || strings.HasPrefix(t, "[X] "):
		return Stale, "marked done"
	case mayStale(folded) && staleRe().MatchString(t):
		return Stale, "marked " + strings.ToLower(staleWord(t))
	case mayApprove(folded) && approvedRe().MatchString(t):
		return Approved, "marked approved"
	}
	return None, ""
}

// staleWord is the stale marker word a note matching staleRe uses.
func staleWord(t string) string {
	lower := strings.ToLower(t)
	for _, w := range []string{"deprecated", "obsolete", "archived", "outdated", "stale"} {
		if strings.Contains(lower, w) {
			return w
		}
	}
	return "stale"
}

// headingWords are the first words of headings over history, lower case,
// and the status the notes below them get.
var headingWords = map[string]Status{
	"superseded": Superseded,
	"archive":    Stale, "archived": Stale, "deprecated": Stale, "obsolete": Stale,
	"outdated": Stale, "stale": Stale, "done": Stale, "old": Stale,
	"approved": Approved,
}

// headingStatus is the status a heading path gives the notes below it: a
// heading that mentions "superseded" anywhere, or starts with one of
// headingWords.
func headingStatus(heading string) (Status, string) {
	best, reason := None, ""
	for _, h := range HeadingParts(heading) {
		lower := strings.ToLower(h)
		st := None
		if strings.Contains(lower, "superseded") {
			st = Superseded
		} else {
			first, _, _ := strings.Cut(lower, " ")
			st = headingWords[strings.TrimRight(first, ":!.")]
		}
		if rank(st) > rank(best) {
			best, reason = st, "under heading "+h
		}
	}
	return best, reason
}

// HeadingHides reports whether governance reads the notes under heading
// (a heading path) as superseded or stale: where a new note must not be
// put, or it would be hidden the moment it is written.
func HeadingHides(heading string) bool {
	st, _ := headingStatus(heading)
	return st == Superseded || st == Stale
}

// HeadingParts splits a heading path "A > B > C" into its headings.
func HeadingParts(heading string) []string {
	if heading == "" {
		return nil
	}
	parts := strings.Split(heading, " > ")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// statusWord reads a frontmatter status value.
func statusWord(s string) (Status, string) {
	s = strings.TrimSpace(s)
	switch {
	case strings.Contains(s, "superseded"):
		return Superseded, ""
	case s == "stale" || s == "deprecated" || s == "obsolete" || s == "archived" || s == "outdated":
		return Stale, ""
	case s == "approved":
		return Approved, ""
	}
	return None, ""
}

// today is the day a note is classified on, the reference for telling
// a due date from the note's date; a variable for tests.
var today = func() time.Time { return time.Now().UTC().Truncate(24 * time.Hour) }

// latestDate returns the latest calendar date (YYYY-MM-DD) written in the
// note or its heading path, leaving out review dates and due dates: those
// after the day the note was written (its AddedMarker date) or, without
// one, after today. review tells whether text may hold a review date.
func latestDate(text, heading string, review bool) (time.Time, bool) {
	if review {
		text = reviewRe().ReplaceAllString(text, "")
	}
	written := today()
	// Only the marker's date is needed: the expression runs from the
	// first "(added " on, not over the whole note.
	if i := strings.Index(text, "(added "); i >= 0 {
		if m := addedRe().FindString(text[i:]); m != "" {
			if d, err := time.Parse("2006-01-02", Dates(m)[0]); err == nil {
				written = d
			}
		}
	}
	var best time.Time
	found := false
	for _, s := range []string{text, heading} {
		for _, m := range Dates(s) {
			d, err := time.Parse("2006-01-02", m)
			if err != nil {
				continue // 2026-13-45 is not a date
			}
			if d.After(written) {
				continue // a due date, not when the note was written
			}
			if !found || d.After(best) {
				best, found = d, true
			}
		}
	}
	return best, found
}

// inlineReview returns the latest review date written in the note.
func inlineReview(text string) (time.Time, bool) {
	var best time.Time
	found := false
	for _, m := range reviewRe().FindAllStringSubmatch(text, -1) {
		if d, err := time.Parse("2006-01-02", m[1]); err == nil && (!found || d.After(best)) {
			best, found = d, true
		}
	}
	return best, found
}

// Dates returns the YYYY-MM-DD strings in s that are not part of a longer
// run of digits or letters.
func Dates(s string) []string {
	var out []string
	for i := 0; i+10 <= len(s); i++ {
		if s[i+4] != '-' || s[i+7] != '-' || !digits(s[i:i+4]) || !digits(s[i+5:i+7]) || !digits(s[i+8:i+10]) {
			continue
		}
		if i > 0 && isWordByte(s[i-1]) || i+10 < len(s) && isWordByte(s[i+10]) {
			continue
		}
		out = append(out, s[i:i+10])
		i += 9
	}
	return out
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isWordByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
}

// withoutCode blanks fenced code and inline code spans, where "#include"
// is not a tag and "status: superseded" is not a marker.
func withoutCode(text string) string {
	if !strings.Contains(text, "`") && !strings.Contains(text, "~~~") {
		return text
	}
	lines := strings.Split(text, "\n")
	fence := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			lines[i] = ""
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
			lines[i] = ""
		default:
			lines[i] = inlineCodeRe().ReplaceAllString(l, "``")
		}
	}
	return strings.Join(lines, "\n")
}

var inlineCodeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`[^`\n]*`") })

// NormalTag is a tag as governance keeps it, the one form every command
// compares: lower-cased, without a leading "#" or trailing punctuation
// ("#Ops-" is "ops"). A tag written, searched for or named in a pack is
// normalised the same way.
func NormalTag(t string) string {
	return strings.ToLower(strings.TrimRight(strings.TrimPrefix(strings.TrimSpace(t), "#"), "-/_."))
}

// addTag adds a tag, normalised (NormalTag), to tags.
func addTag(tags []string, t string) []string {
	t = NormalTag(t)
	if t == "" || slices.Contains(tags, t) {
		return tags
	}
	return append(tags, t)
}

// ParseAge reads a length of time as stale_after and the date filters
// spell it: "90d", "2w", "36h", a number of days ("90"), or "never" (also
// "0"), which is Never.
func ParseAge(s string) (time.Duration, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "never" || s == "0" {
		return Never, nil
	}
	unit := 24 * time.Hour
	num := s
	switch {
	case strings.HasSuffix(s, "d"):
		num = s[:len(s)-1]
	case strings.HasSuffix(s, "w"):
		num, unit = s[:len(s)-1], 7*24*time.Hour
	case strings.HasSuffix(s, "h"):
		num, unit = s[:len(s)-1], time.Hour
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || n > 100000 {
		return 0, fmt.Errorf("%q is not a length of time (want e.g. 90d, 2w, 36h or never)", s)
	}
	return time.Duration(n) * unit, nil
}

// ParseSince reads a --since value: a date (YYYY-MM-DD, from the start of
// that day in UTC) or an age before now ("7d", "2w", "36h").
func ParseSince(s string, now time.Time) (time.Time, error) {
	return parseWhen(s, now, false)
}

// ParseUntil reads an --until value like ParseSince, but a date means up
// to the end of that day.
func ParseUntil(s string, now time.Time) (time.Time, error) {
	return parseWhen(s, now, true)
}

func parseWhen(s string, now time.Time, endOfDay bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if d, err := time.Parse("2006-01-02", s); err == nil {
		if endOfDay {
			d = d.Add(24*time.Hour - time.Nanosecond)
		}
		return d, nil
	}
	age, err := ParseAge(s)
	if err != nil || age == Never {
		return time.Time{}, fmt.Errorf("%q is neither a date (YYYY-MM-DD) nor an age (7d, 2w, 36h)", s)
	}
	return now.Add(-age), nil
}

// When is the time a note is dated by: its Date, else its file's mtime.
func (n Note) When(mtime time.Time) time.Time {
	if !n.Date.IsZero() {
		return n.Date
	}
	return mtime
}

// Staleness tells whether a note is stale at now, and why: marked stale, a
// review date passed ("review due 2026-10-01"), or not updated for longer
// than its StaleAfter, else defaultAfter (zero: DefaultStaleAfter). The note
// is dated by When.
func (n Note) Staleness(mtime, now time.Time, defaultAfter time.Duration) (bool, string) {
	if n.Status == Stale {
		return true, n.Reason
	}
	if !n.Review.IsZero() && !now.Before(n.Review) {
		return true, "review due " + n.Review.Format("2006-01-02")
	}
	after := n.StaleAfter
	if after == 0 {
		after = defaultAfter
	}
	if after == 0 {
		after = DefaultStaleAfter
	}
	when := n.When(mtime)
	if after != Never && !when.IsZero() && now.Sub(when) > after {
		return true, "not updated since " + when.UTC().Format("2006-01-02")
	}
	return false, ""
}
