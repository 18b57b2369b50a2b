// Package secrets decides whether a text holds a credential, where, and of
// what kind, and masks it: the one rule behind remember's refusal and
// --redact, the text the miner stores for showing, status and doctor.
//
// Detection is gitleaks' (github.com/zricethezav/gitleaks/v8): its default
// rule set with its keywords, entropy thresholds and allowlists, run as its
// detector runs them (engine), plus the rules of extra.toml (a password in
// a URL, an AWS secret key, a credential assigned to a name that says so).
// The rules are read on the first call (about 10 ms) and each rule's
// regexps compiled the first time a text holds one of its keywords, so a
// command that never reads or writes a note's text never pays for them.
package secrets

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

//go:embed extra.toml
var extraRules string

// Finding is one secret in a text: its kind and where it is, never the
// secret itself.
type Finding struct {
	// Kind is the gitleaks rule that found it ("github-pat",
	// "aws-access-token", "generic-api-key", …, or "url-password").
	Kind string `json:"kind"`
	// Line and Column are where it starts, from 1; Column counts
	// characters (runes) from the start of the line.
	Line   int `json:"line"`
	Column int `json:"column"`
	// Word is the whitespace-separated word of the text it starts in,
	// from 1.
	Word int `json:"word"`

	start, end int // the secret's bytes in the text
}

// String words f for a person or an agent: the kind and where, never the
// secret.
func (f Finding) String() string {
	return fmt.Sprintf("%s at line %d, column %d (word %d)", f.Kind, f.Line, f.Column, f.Word)
}

// Describe lists findings as String words each, joined by "; ".
func Describe(found []Finding) string {
	parts := make([]string, len(found))
	for i, f := range found {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}

// rules are gitleaks' default rules and extra.toml's, read on first use.
var rules = sync.OnceValue(func() *engine {
	e, err := newEngine()
	if err != nil {
		panic(fmt.Sprintf("secrets: the embedded rules: %v", err))
	}
	return e
})

// Find returns the secrets in text, in the order they appear; none for an
// ordinary text. Overlapping findings are one, of the first one's kind.
func Find(text string) []Finding {
	if text == "" {
		return nil
	}
	scan := prose(text)
	var found []Finding
	for _, f := range rules().find(scan) {
		if f.secret == "" {
			continue
		}
		// Every occurrence: a secret repeated in the text is masked
		// everywhere.
		for off := 0; ; {
			i := strings.Index(scan[off:], f.secret)
			if i < 0 {
				break
			}
			start := off + i
			found = append(found, Finding{Kind: f.kind, start: start, end: start + len(f.secret)})
			off = start + len(f.secret)
		}
	}
	if len(found) == 0 {
		return nil
	}
	// The map of rules gitleaks walks has no order: ties go to the longer
	// secret, then to a rule of one kind of secret over a generic one,
	// then by name, so a text always gets the same kinds.
	slices.SortFunc(found, func(a, b Finding) int {
		switch {
		case a.start != b.start:
			return a.start - b.start
		case a.end != b.end:
			return b.end - a.end
		case generic(a.Kind) != generic(b.Kind):
			if generic(a.Kind) {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	merged := found[:1]
	for _, f := range found[1:] {
		last := &merged[len(merged)-1]
		if f.start < last.end {
			last.end = max(last.end, f.end)
			continue
		}
		merged = append(merged, f)
	}
	for i := range merged {
		merged[i].Line, merged[i].Column, merged[i].Word = position(text, merged[i].start)
	}
	return merged
}

// generic reports whether kind is a rule of no particular service.
func generic(kind string) bool {
	return strings.HasPrefix(kind, "generic") || kind == "credential-assignment"
}

// prose is text with the punctuation that ends a sentence — '.', '!', '?'
// or ')' before white space or the end — turned into spaces, the same
// length: gitleaks' rules want a token followed by white space, a quote
// or the end of a line, as in code, and a note says "the key is
// sk_live_….".
func prose(text string) string {
	var b []byte
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '.', '!', '?', ')':
			if i+1 == len(text) || isSpace(text[i+1]) {
				if b == nil {
					b = []byte(text)
				}
				b[i] = ' '
			}
		}
	}
	if b == nil {
		return text
	}
	return string(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// position is the line, column (in runes) and word, each from 1, of the
// byte at off in text.
func position(text string, off int) (line, column, word int) {
	before := text[:off]
	line = 1 + strings.Count(before, "\n")
	column = 1 + utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:])
	word = 1 + len(strings.FieldsFunc(before, unicode.IsSpace))
	if off > 0 && !unicode.IsSpace(rune(text[off-1])) {
		word-- // the secret starts inside a word ("password=…")
	}
	return line, column, word
}

// Redact returns text with each secret replaced by "[redacted: KIND]",
// and what it replaced: what remember --redact writes.
func Redact(text string) (string, []Finding) {
	found := Find(text)
	return replace(text, found, redactedMark), found
}

// FindWritten is how a note about to be written is checked (remember,
// capture): as Find, but a "gitleaks:allow" marker lets nothing through.
// The marker is a person's word on a file they reviewed; in a note an
// agent writes, it would carry a credential into every machine's memory.
func FindWritten(text string) []Finding { return Find(disarmAllow(text)) }

// RedactWritten is Redact with FindWritten's findings.
func RedactWritten(text string) (string, []Finding) {
	found := FindWritten(text)
	return replace(text, found, redactedMark), found
}

// disarmAllow spells the allow marker so that it no longer is one, in
// as many bytes, so that findings' places stay those of text.
func disarmAllow(text string) string {
	return strings.ReplaceAll(text, gitleaksAllow, "gitleaks_allow")
}

// Hide returns text with each secret replaced by "[secret hidden: KIND]",
// and what it replaced: the text memminer shows of a note or file that
// holds one, which stays as it is on disk. Hidden finds the marks again.
func Hide(text string) (string, []Finding) {
	m := Scan(text)
	return m.Hide(text), m.Found
}

// Masker hides the secrets Scan found in a whole text in any part of it:
// the notes a memory file is cut into, where a long note may be cut in
// two between a private key's lines, or between "password:" and its
// value, and neither part alone looks like a secret.
type Masker struct {
	// Found are the secrets of the text Scan was given, placed in it.
	Found  []Finding
	pieces []piece
}

// piece is one line of a secret, as a note holds it (without the
// indentation a list item's continuation lines have in the file).
type piece struct {
	text, kind string
}

// minLoosePiece is the length from which a piece is hidden wherever it
// occurs; a shorter one only where it is not part of a longer word.
const minLoosePiece = 8

// Scan finds the secrets of text, a whole file, for Hide on its parts.
func Scan(text string) Masker {
	m := Masker{Found: Find(text)}
	for _, f := range m.Found {
		for line := range strings.SplitSeq(text[f.start:f.end], "\n") {
			if line = strings.TrimSpace(line); line != "" {
				m.pieces = append(m.pieces, piece{line, f.Kind})
			}
		}
	}
	// The longer first, so a piece inside another is not hidden alone.
	slices.SortStableFunc(m.pieces, func(a, b piece) int { return len(b.text) - len(a.text) })
	return m
}

// Hide returns part, a part of the text m was made from, with each piece
// of a secret in it replaced by "[secret hidden: KIND]"; pieces separated
// only by white space (a private key's lines) become one mark.
func (m Masker) Hide(part string) string {
	if len(m.pieces) == 0 {
		return part
	}
	var found []Finding
	taken := func(start, end int) bool {
		for _, f := range found {
			if start < f.end && f.start < end {
				return true
			}
		}
		return false
	}
	for _, p := range m.pieces {
		for off := 0; ; {
			i := strings.Index(part[off:], p.text)
			if i < 0 {
				break
			}
			start, end := off+i, off+i+len(p.text)
			off = end
			if len(p.text) < minLoosePiece && (wordByte(part, start-1) || wordByte(part, end)) {
				continue
			}
			if !taken(start, end) {
				found = append(found, Finding{Kind: p.kind, start: start, end: end})
			}
		}
	}
	if len(found) == 0 {
		return part
	}
	slices.SortFunc(found, func(a, b Finding) int { return a.start - b.start })
	merged := found[:1]
	for _, f := range found[1:] {
		last := &merged[len(merged)-1]
		if f.Kind == last.Kind && strings.TrimSpace(part[last.end:f.start]) == "" {
			last.end = f.end
			continue
		}
		merged = append(merged, f)
	}
	return replace(part, merged, hiddenMark)
}

// wordByte reports whether s[i] is a letter or digit; false out of s.
func wordByte(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// HiddenMark starts the mark Hide puts in place of a secret; a note's text
// holds one for each secret hidden in it.
const HiddenMark = hiddenMark

const (
	redactedMark = "[redacted: "
	hiddenMark   = "[secret hidden: "
)

func replace(text string, found []Finding, mark string) string {
	if len(found) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, f := range found {
		b.WriteString(text[last:f.start])
		b.WriteString(mark)
		b.WriteString(f.Kind)
		b.WriteByte(']')
		last = f.end
	}
	b.WriteString(text[last:])
	return b.String()
}

// Hidden returns the secrets Hide masked in text, found by their marks:
// the kind and where the mark is. It compiles nothing, so status and
// doctor count the palace's secrets without loading the rules.
func Hidden(text string) []Finding {
	var found []Finding
	for off := 0; ; {
		i := strings.Index(text[off:], hiddenMark)
		if i < 0 {
			return found
		}
		start := off + i
		kindAt := start + len(hiddenMark)
		j := strings.IndexByte(text[kindAt:], ']')
		if j < 0 {
			return found
		}
		f := Finding{Kind: text[kindAt : kindAt+j], start: start, end: kindAt + j + 1}
		f.Line, f.Column, f.Word = position(text, start)
		found = append(found, f)
		off = f.end
	}
}
