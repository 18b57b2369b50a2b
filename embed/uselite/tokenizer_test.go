package uselite

import (
	"slices"
	"strings"
	"testing"
)

// tinyVocab is a synthetic vocabulary that exercises the TF.js tokenizer's
// rules: reserved pieces, a duplicate piece, a piece with score 0, ties.
func tinyVocab() []Piece {
	return []Piece{
		{"\uFFFD", 0}, {"<s>", 0}, {"</s>", 0}, {"extra_token_id_1", 0}, {"extra_token_id_2", 0}, {"extra_token_id_3", 0},
		{"▁", -2},   // 6
		{"a", -3},   // 7
		{"b", -3},   // 8
		{"ab", -1},  // 9: overridden by 17
		{"▁ab", -5}, // 10
		{"c", -6},   // 11
		{"▁c", -1},  // 12
		{":0", 0},   // 13: score 0, as ":00" in the real vocabulary
		{"0", -2},   // 14
		{"é", -1},   // 15
		{"A", -1},   // 16
		{"ab", -9},  // 17: the later duplicate wins
		{"▁b", -5},  // 18: ties with ▁ + b
	}
}

func TestTokenizeTinyVocab(t *testing.T) {
	tok := NewTokenizer(tinyVocab())
	tests := []struct {
		name string
		text string
		want []int
	}{
		{"empty", "", []int{}},
		{"later duplicate wins", "ab", []int{10}},
		{"spaces become separators", "a b", []int{6, 7, 6, 8}},
		{"best path", "c", []int{12}},
		{"unknowns merge", "xy", []int{6, 0}},
		{"unknown then piece", "x ab", []int{6, 0, 10}},
		{"tie goes to the later start", "b", []int{6, 8}},
		{"zero score counts as unreached", ":0", []int{6, 0, 14}},
		{"NFKC composes", "e\u0301", []int{6, 15}},
		{"NFKC folds width", "Ａ", []int{6, 16}},
		{"only spaces", "  ", []int{6, 6, 6}},
		{"tab is not a space", "a\tb", []int{6, 7, 0, 8}},
		{"invalid UTF-8", "a\xffb", []int{6, 7, 0, 8}},
		{"emoji", "😀", []int{6, 0}},
		{"reserved pieces never match", "<s>", []int{6, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tok.Tokenize(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("Tokenize(%q) = %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestTokenizeLargeInput(t *testing.T) {
	tok := NewTokenizer(tinyVocab())
	text := strings.Repeat("ab c\xff😀 ", 1<<20/12)
	ids := tok.Tokenize(text)
	if len(ids) == 0 {
		t.Fatal("no pieces for a 1 MB text")
	}
	for _, id := range ids {
		if id < 0 || id >= tok.VocabSize() {
			t.Fatalf("id %d out of range", id)
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", " ", "ab c", "\xff\xfe", "😀:0:0", "e\u0301"} {
		f.Add(s)
	}
	tok := NewTokenizer(tinyVocab())
	f.Fuzz(func(t *testing.T, s string) {
		for _, id := range tok.Tokenize(s) {
			if id < 0 || id >= tok.VocabSize() {
				t.Fatalf("Tokenize(%q): id %d out of range", s, id)
			}
		}
	})
}

// TestWordLogProb: a word's log probability is its best split's score,
// lower-cased, a character no piece covers counting as the least likely
// piece (-9 here).
func TestWordLogProb(t *testing.T) {
	tok := NewTokenizer(tinyVocab())
	for _, tt := range []struct {
		word string
		want float64
	}{
		{"c", -1},      // ▁c
		{"cc", -7},     // ▁c + c
		{"ab", -5},     // ▁ab, or ▁ + a + b
		{"AB", -5},     // lower-cased first
		{"cz", -1 - 9}, // ▁c + an uncovered z
	} {
		if got := tok.WordLogProb(tt.word); got != tt.want {
			t.Errorf("WordLogProb(%q) = %v, want %v", tt.word, got, tt.want)
		}
	}
	// The packed form's tokenizer knows the same least score.
	packed, ok := newTokenizerFrom(tok.pieces, tok.keys, tok.child, tok.id, tok.score)
	if !ok || packed.WordLogProb("cz") != tok.WordLogProb("cz") {
		t.Errorf("the packed tokenizer scores cz %v, want %v", packed.WordLogProb("cz"), tok.WordLogProb("cz"))
	}
}
