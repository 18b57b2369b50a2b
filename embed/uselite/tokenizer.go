package uselite

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// separator replaces spaces and starts every text before tokenisation
// (U+2581, "lower one eighth block"), as in SentencePiece.
const separator = '\u2581'

// reservedPieces is the number of vocabulary entries at the start (the
// unknown piece, <s>, </s> and three extra ids) that never match text.
const reservedPieces = 6

// unknownID is the id of the unknown piece.
const unknownID = 0

// Piece is one vocabulary entry: a SentencePiece piece and its log
// probability score.
type Piece struct {
	Text  string
	Score float64
}

// Tokenizer splits text into the vocabulary's pieces with the unigram
// Viterbi search of the TF.js Universal Sentence Encoder tokenizer, quirks
// included, so that it returns the same ids piece for piece:
//
//   - text is NFKC-normalised (case is kept), prefixed with "▁" and every
//     U+0020 space becomes "▁"; other whitespace is left alone;
//   - a position where no piece starts becomes an unknown piece (id 0) of
//     one character with score 0, and consecutive unknowns merge into one;
//   - on equal scores the later candidate wins, and a lattice node whose
//     best score is exactly 0 counts as not yet reached.
//
// A Tokenizer is safe for concurrent use.
type Tokenizer struct {
	pieces []Piece
	// lens[id] is the length of pieces[id] in UTF-16 code units, the unit
	// the TF.js implementation steps back by.
	lens []int
	// leastScore is the least likely piece's score: what WordLogProb
	// counts for a character no piece covers.
	leastScore float64
	// The trie of the pieces, flat: node 0 is the root; keys are the
	// edges (edge: a node and a rune), sorted, and child[i] the node
	// keys[i] leads to; id and score are each node's piece (-1 for none)
	// and its score. Flat arrays are stored in the packed model file and
	// mapped (packed.go), so a load builds no trie.
	keys  []uint64
	child []int32
	id    []int32
	score []float64
}

// edge is the key of node's edge for r.
func edge(node int32, r rune) uint64 { return uint64(uint32(node))<<32 | uint64(uint32(r)) }

// childOf returns node's child for r, -1 for none.
func (t *Tokenizer) childOf(node int32, r rune) int32 {
	if i, ok := slices.BinarySearch(t.keys, edge(node, r)); ok {
		return t.child[i]
	}
	return -1
}

// newTokenizerFrom makes the tokenizer over vocab of a trie's arrays (a
// packed file's), false when they are not one: keys unsorted, or a child
// or piece out of range.
func newTokenizerFrom(vocab []Piece, keys []uint64, child, id []int32, score []float64) (*Tokenizer, bool) {
	if len(keys) != len(child) || len(id) != len(score) || len(id) == 0 {
		return nil, false
	}
	for i, c := range child {
		if c <= 0 || int(c) >= len(id) || i > 0 && keys[i] <= keys[i-1] {
			return nil, false
		}
	}
	for _, p := range id {
		if int(p) >= len(vocab) || p < -1 {
			return nil, false
		}
	}
	t := &Tokenizer{pieces: vocab, lens: make([]int, len(vocab)), keys: keys, child: child, id: id, score: score}
	for i, p := range vocab {
		t.lens[i] = utf16Len(p.Text)
		t.noteScore(i, p)
	}
	return t, true
}

// NewTokenizer builds a tokenizer over vocab, whose first entries are the
// reserved pieces (the unknown piece first). When a piece occurs twice, the
// later entry wins, as in the TF.js trie.
func NewTokenizer(vocab []Piece) *Tokenizer {
	runes := 0
	for _, p := range vocab {
		runes += len(p.Text)
	}
	t := &Tokenizer{
		pieces: vocab,
		lens:   make([]int, len(vocab)),
		id:     make([]int32, 1, runes+1),
		score:  make([]float64, 1, runes+1),
	}
	edges := make(map[uint64]int32, runes)
	t.id[0] = -1
	for i, p := range vocab {
		t.lens[i] = utf16Len(p.Text)
		t.noteScore(i, p)
		if i < reservedPieces || p.Text == "" {
			continue
		}
		n := int32(0)
		for _, r := range p.Text {
			c, ok := edges[edge(n, r)]
			if !ok {
				c = int32(len(t.id))
				edges[edge(n, r)] = c
				t.id, t.score = append(t.id, -1), append(t.score, 0)
			}
			n = c
		}
		t.id[n], t.score[n] = int32(i), p.Score
	}
	t.keys = slices.Sorted(maps.Keys(edges))
	t.child = make([]int32, len(t.keys))
	for i, k := range t.keys {
		t.child[i] = edges[k]
	}
	return t
}

// noteScore keeps the least score of the pieces that match text.
func (t *Tokenizer) noteScore(i int, p Piece) {
	if i >= reservedPieces {
		t.leastScore = min(t.leastScore, p.Score)
	}
}

// VocabSize returns the number of pieces in the vocabulary.
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// Piece returns the text of piece id, or "" when id is out of range.
func (t *Tokenizer) Piece(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	return t.pieces[id].Text
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if l := utf16.RuneLen(r); l > 0 {
			n += l
		} else {
			n++
		}
	}
	return n
}

// normalize prepares text the way the TF.js tokenizer does: NFKC, then a
// leading separator and every space replaced by the separator. Invalid
// UTF-8 bytes become U+FFFD.
func normalize(text string) []rune {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	text = norm.NFKC.String(text)
	if text == "" {
		return nil
	}
	out := make([]rune, 0, len(text)+1)
	out = append(out, separator)
	for _, r := range text {
		if r == ' ' {
			r = separator
		}
		out = append(out, r)
	}
	return out
}

// Tokenize returns the vocabulary ids of text's pieces, all of them (the
// model reads only the first MaxPieces). It never fails: characters the
// vocabulary lacks become the unknown id 0.
func (t *Tokenizer) Tokenize(text string) []int {
	return t.encode(normalize(text))
}

func (t *Tokenizer) encode(syms []rune) []int {
	n := len(syms)
	if n == 0 {
		return []int{}
	}
	// Viterbi over the lattice of pieces. The TF.js implementation relaxes
	// the pieces ending at each node by ascending start position; relaxing
	// them here by ascending start visits every node's candidates in that
	// same order, and best[i] is final before any piece starting at i is
	// looked at.
	best := make([]float64, n+1)
	words := make([]int32, n+1)
	relax := func(e, id int, s float64) {
		if best[e] == 0 || s >= best[e] {
			best[e] = s
			words[e] = int32(id)
		}
	}
	for i := range n {
		found := false
		node := t.childOf(0, syms[i])
		for j := i; node >= 0; {
			if id := t.id[node]; id >= 0 {
				relax(j+1, int(id), t.score[node]+best[i])
				found = true
			}
			j++
			if j >= n {
				break
			}
			node = t.childOf(node, syms[j])
		}
		if !found {
			relax(i+1, unknownID, best[i])
		}
	}
	// Walk back from the end by the length of each chosen piece's text, as
	// the TF.js implementation does (the unknown piece's text is one
	// character long).
	var rev []int
	for i := n; i > 0; {
		id := int(words[i])
		rev = append(rev, id)
		step := t.lens[id]
		if step <= 0 {
			step = 1
		}
		i -= step
	}
	out := make([]int, 0, len(rev))
	prevUnk := false
	for _, id := range rev {
		if !(prevUnk && id == unknownID) {
			out = append(out, id)
		}
		prevUnk = id == unknownID
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// WordLogProb is the log probability of word, lower-cased, as one word of
// text under the vocabulary's unigram model: the score of its best split
// into pieces. A word the training text used often is one likely piece
// ("host": about -9); a rare or made-up one takes several unlikely pieces
// ("zorblax": below -30). A position no piece covers scores as the
// vocabulary's least likely piece.
func (t *Tokenizer) WordLogProb(word string) float64 {
	syms := normalize(strings.ToLower(word))
	n := len(syms)
	if n <= 1 {
		return 0
	}
	unknown := t.leastScore
	best := make([]float64, n+1)
	reached := make([]bool, n+1)
	reached[0] = true
	for i := range n {
		if !reached[i] {
			continue
		}
		found := false
		node := t.childOf(0, syms[i])
		for j := i; node >= 0; {
			if id := t.id[node]; id >= 0 {
				if s := best[i] + t.score[node]; !reached[j+1] || s > best[j+1] {
					best[j+1], reached[j+1] = s, true
				}
				found = true
			}
			j++
			if j >= n {
				break
			}
			node = t.childOf(node, syms[j])
		}
		if !found {
			if s := best[i] + unknown; !reached[i+1] || s > best[i+1] {
				best[i+1], reached[i+1] = s, true
			}
		}
	}
	return best[n]
}
