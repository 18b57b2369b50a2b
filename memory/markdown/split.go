package markdown

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// piece is one part of a split note: its text and the 0-based line of the
// note text where it starts.
type piece struct {
	line int
	text string
}

// cutClass ranks places where a long note may be cut; higher is better.
type cutClass int8

const (
	cutWord     cutClass = iota + 1 // between words
	cutLine                         // at a line break
	cutSentence                     // after a sentence
	cutBlock                        // before a block: after a blank line, a nested item, a table row
)

// cut is a place to end a piece: the piece is text[pos:at].
type cut struct {
	at    int
	class cutClass
}

// splitter splits one note's text.
type splitter struct {
	text       string
	lineStarts []int       // byte offset of each line of text
	runeOffs   []int       // byte offset of each rune, then len(text)
	cuts       []cut       // sorted by at, one per offset
	code       []codeRange // code blocks, sorted
	glue       [][2]int    // byte ranges of lines that introduce code, sorted
}

// codeRange is a code block in the text: bytes [start, end). When glued,
// the line before it introduces it and no cut may come between them.
type codeRange struct {
	start, end int
	glued      bool
}

// splitNote splits text, whose lines are numbered from 0, into pieces of at
// most maxRunes runes (see Parse for the rules). protected are the line
// ranges of code blocks and blockStarts the lines where a nested block
// starts.
func splitNote(text string, maxRunes int, protected []lineRange, blockStarts map[int]bool) []piece {
	if utf8.RuneCountInString(text) <= maxRunes {
		return []piece{{line: 0, text: text}}
	}
	s := newSplitter(text, protected, blockStarts)
	var pieces []piece
	emit := func(from, to int) {
		t := strings.TrimRightFunc(s.text[from:to], unicode.IsSpace)
		if t == "" {
			return
		}
		lines := strings.Split(t, "\n")
		dedent(lines)
		lines[0] = strings.TrimLeft(lines[0], " \t")
		pieces = append(pieces, piece{line: s.lineOf(from), text: strings.Join(lines, "\n")})
	}
	pos := 0
	for pos < len(text) {
		ri := sort.SearchInts(s.runeOffs, pos)
		if len(s.runeOffs)-1-ri <= maxRunes {
			emit(pos, len(text))
			break
		}
		limit := s.runeOffs[ri+maxRunes]
		minEnd := s.runeOffs[ri+maxRunes/4]
		c := s.choose(pos, minEnd, limit)
		emit(pos, c)
		pos = s.next(c)
	}
	return pieces
}

func newSplitter(text string, protected []lineRange, blockStarts map[int]bool) *splitter {
	s := &splitter{text: text, lineStarts: []int{0}}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			s.lineStarts = append(s.lineStarts, i+1)
		}
	}
	s.runeOffs = make([]int, 0, len(text)+1)
	for i := range text {
		s.runeOffs = append(s.runeOffs, i)
	}
	s.runeOffs = append(s.runeOffs, len(text))
	s.protect(protected)

	for k, ls := range s.lineStarts {
		line := text[ls:s.lineEnd(k)]
		if k > 0 && strings.TrimSpace(line) != "" {
			class := cutLine
			prev := text[s.lineStarts[k-1]:s.lineEnd(k-1)]
			if blockStarts[k] || strings.TrimSpace(prev) == "" {
				class = cutBlock
			}
			s.cuts = append(s.cuts, cut{at: ls, class: class})
		}
		s.lineCuts(line, ls, k == len(s.lineStarts)-1)
	}
	sort.SliceStable(s.cuts, func(i, j int) bool { return s.cuts[i].at < s.cuts[j].at })
	glue := s.glue
	cuts := s.cuts[:0]
	for _, c := range s.cuts {
		if c.at <= 0 || c.at >= len(text) {
			continue
		}
		for len(glue) > 0 && glue[0][1] <= c.at {
			glue = glue[1:]
		}
		if c.class == cutWord && len(glue) > 0 && glue[0][0] <= c.at {
			continue // no word cuts in a line that introduces code
		}
		if n := len(cuts); n > 0 && cuts[n-1].at == c.at {
			cuts[n-1].class = max(cuts[n-1].class, c.class)
			continue
		}
		cuts = append(cuts, c)
	}
	s.cuts = cuts
	return s
}

// protect records the code blocks (line ranges of the text), merging any
// that overlap, and which of them are glued to the line before them: the
// last non-blank line before the code, unless that line is code too.
func (s *splitter) protect(ranges []lineRange) {
	for _, r := range ranges {
		if r.first < 0 || r.first >= len(s.lineStarts) || r.last < r.first {
			continue
		}
		last := min(r.last, len(s.lineStarts)-1)
		s.code = append(s.code, codeRange{start: s.lineStarts[r.first], end: s.lineEnd(last)})
	}
	sort.Slice(s.code, func(i, j int) bool { return s.code[i].start < s.code[j].start })
	merged := s.code[:0]
	for _, r := range s.code {
		if n := len(merged); n > 0 && r.start <= merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, r.end)
			continue
		}
		merged = append(merged, r)
	}
	s.code = merged
	for i := range s.code {
		k := s.lineOf(s.code[i].start) - 1
		for k >= 0 && strings.TrimSpace(s.text[s.lineStarts[k]:s.lineEnd(k)]) == "" {
			k--
		}
		if k < 0 || s.codeAt(s.lineStarts[k]) >= 0 {
			continue
		}
		s.code[i].glued = true
		s.glue = append(s.glue, [2]int{s.lineStarts[k], s.code[i].start})
	}
}

// codeAt returns the index of the code range holding byte offset off, or -1.
func (s *splitter) codeAt(off int) int {
	i := sort.Search(len(s.code), func(i int) bool { return s.code[i].start > off }) - 1
	if i >= 0 && off < s.code[i].end {
		return i
	}
	return -1
}

// inGlue reports whether byte offset off lies in a line that introduces
// code.
func (s *splitter) inGlue(off int) bool {
	i := sort.Search(len(s.glue), func(i int) bool { return s.glue[i][0] > off }) - 1
	return i >= 0 && off < s.glue[i][1]
}

// lineEnd returns the byte offset where line k of the text ends (its '\n').
func (s *splitter) lineEnd(k int) int {
	if k+1 < len(s.lineStarts) {
		return s.lineStarts[k+1] - 1
	}
	return len(s.text)
}

// lineOf returns the line of the text holding byte offset off.
func (s *splitter) lineOf(off int) int {
	return sort.Search(len(s.lineStarts), func(i int) bool { return s.lineStarts[i] > off }) - 1
}

// lineCuts adds the word and sentence cuts of one line starting at byte ls.
func (s *splitter) lineCuts(line string, ls int, lastLine bool) {
	prevSpace := true
	for i, r := range line {
		space := r == ' ' || r == '\t'
		if space && !prevSpace {
			s.cuts = append(s.cuts, cut{at: ls + i, class: cutWord})
		}
		prevSpace = space
		if space {
			continue
		}
		switch r {
		case '.', '!', '?':
			j := skipClosers(line, i+1)
			switch {
			case j == len(line) && !lastLine:
			case j < len(line) && (line[j] == ' ' || line[j] == '\t'):
			default:
				continue
			}
			if r == '.' && !endsSentence(line[:i]) {
				continue
			}
			s.cuts = append(s.cuts, cut{at: ls + j, class: cutSentence})
		case '。', '！', '？':
			j := skipClosers(line, i+utf8.RuneLen(r))
			if j < len(line) || !lastLine {
				s.cuts = append(s.cuts, cut{at: ls + j, class: cutSentence})
			}
		}
	}
}

// skipClosers skips closing quotes, brackets and emphasis after a sentence
// end at byte i of line.
func skipClosers(line string, i int) int {
	for i < len(line) {
		r, n := utf8.DecodeRuneInString(line[i:])
		if !strings.ContainsRune(`)]}"'*_`+"`”’»」』）】", r) {
			break
		}
		i += n
	}
	return i
}

// abbreviations end with a period that does not end a sentence.
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "vs": true, "cf": true, "approx": true, "fig": true,
	"mr": true, "mrs": true, "ms": true, "dr": true, "st": true, "jr": true, "sr": true,
}

// endsSentence reports whether a period after before ends a sentence, rather
// than an abbreviation, an initial or an ordered-list number.
func endsSentence(before string) bool {
	start := strings.LastIndexAny(before, " \t") + 1
	word := strings.TrimLeft(before[start:], `([{"'*_`+"`")
	if word == "" {
		return true
	}
	if abbreviations[strings.ToLower(word)] {
		return false
	}
	if r, n := utf8.DecodeRuneInString(word); n == len(word) && unicode.IsUpper(r) {
		return false // an initial: "J. Smith"
	}
	if start == 0 && strings.Trim(word, "0123456789") == "" {
		return false // "1." opening a line is a list number
	}
	return true
}

// next returns where the piece after a cut at c starts: at the first
// non-blank character, or at the start of its line when the cut is followed
// by a line break (so the line's indentation can be judged as a whole).
func (s *splitter) next(c int) int {
	i, nl := c, -1
	for i < len(s.text) {
		switch s.text[i] {
		case '\n':
			nl = i
		case ' ', '\t', '\r', '\v', '\f':
		default:
			if nl >= 0 {
				return nl + 1
			}
			return i
		}
		i++
	}
	return i
}

// allowed reports whether a cut at c keeps every code block whole and
// attached to the line that introduces it. A cut may fall right before code
// that nothing introduces.
func (s *splitter) allowed(c int) bool {
	if i := s.codeAt(c); i >= 0 && c > s.code[i].start {
		return false
	}
	n := s.next(c)
	if i := s.codeAt(n); i >= 0 {
		return !s.code[i].glued && s.lineOf(n) == s.lineOf(s.code[i].start)
	}
	return true
}

// choose picks where the piece starting at pos ends. limit is the byte offset
// after maxRunes runes and minEnd the one after a quarter of that.
func (s *splitter) choose(pos, minEnd, limit int) int {
	hi := sort.Search(len(s.cuts), func(i int) bool { return s.cuts[i].at > limit })
	var best [cutBlock + 1]int
	short, shortClass := -1, cutClass(0)
	for i := hi - 1; i >= 0 && s.cuts[i].at > pos; i-- {
		c := s.cuts[i]
		if !s.allowed(c.at) {
			continue
		}
		if c.at > minEnd {
			if best[c.class] == 0 {
				best[c.class] = c.at
			}
		} else if c.class > shortClass {
			short, shortClass = c.at, c.class
		}
	}
	for class := cutBlock; class >= cutWord; class-- {
		if best[class] > 0 {
			return best[class]
		}
	}
	if short > 0 {
		return short
	}
	if s.allowed(limit) && !s.inGlue(limit) {
		return limit // one word longer than the bound: cut between runes
	}
	for i := hi; i < len(s.cuts); i++ {
		if s.allowed(s.cuts[i].at) {
			return s.cuts[i].at
		}
	}
	return len(s.text)
}
