package uselite

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// reference is testdata/reference.json, written by testdata/refgen/gen.js
// with the TF.js implementation of the same graph.
type reference struct {
	Cases []struct {
		Text   string    `json:"text"`
		IDs    []int     `json:"ids"`
		Vector []float64 `json:"vector"`
	} `json:"cases"`
}

func readReference(t *testing.T) reference {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("parse reference.json: %v", err)
	}
	if len(ref.Cases) < 20 {
		t.Fatalf("reference.json has %d cases, want at least 20", len(ref.Cases))
	}
	return ref
}

func TestReferenceTokens(t *testing.T) {
	m := loadRealModel(t)
	for _, c := range readReference(t).Cases {
		got := m.Tokenize(c.Text)
		if !slices.Equal(got, c.IDs) {
			t.Errorf("Tokenize(%q)\n got %v\nwant %v\npieces %q", c.Text, got, c.IDs, m.Pieces(c.Text))
		}
	}
}

func TestReferenceVectors(t *testing.T) {
	m := loadRealModel(t)
	ref := readReference(t)
	texts := make([]string, len(ref.Cases))
	for i, c := range ref.Cases {
		texts[i] = c.Text
	}
	// Once as one batch (as gen.js ran them) and once one by one: batching
	// must not change a vector.
	batch, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	worst := 1.0
	for i, c := range ref.Cases {
		single, err := m.Embed(context.Background(), []string{c.Text})
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range [][]float32{batch[i], single[0]} {
			if len(got) != Dim {
				t.Fatalf("%q: vector of %d, want %d", c.Text, len(got), Dim)
			}
			cos := cosine(got, c.Vector)
			worst = min(worst, cos)
			if cos < 0.999 {
				t.Errorf("%q: cosine to TF.js %.6f, want >= 0.999", c.Text, cos)
			}
		}
	}
	t.Logf("%d cases, minimum cosine to TF.js %.9f (1 - cos = %.1e)", len(ref.Cases), worst, 1-worst)
}

func TestEmbedOddInputsReal(t *testing.T) {
	m := loadRealModel(t)
	texts := oddTexts()
	vecs, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, vecs, len(texts), Dim)
}

// TestReferenceTokensMore compares the tokenizer with the TF.js one on 500
// generated texts (testdata/tokens.json, also from gen.js).
func TestReferenceTokensMore(t *testing.T) {
	m := loadRealModel(t)
	for _, c := range readTokenCases(t) {
		if got := m.Tokenize(c.Text); !slices.Equal(got, c.IDs) {
			t.Errorf("Tokenize(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
		}
	}
}

// tokenCase is one text of testdata/tokens.json and its pieces' ids.
type tokenCase struct {
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

// readTokenCases reads testdata/tokens.json.
func readTokenCases(t *testing.T) []tokenCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []tokenCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("parse tokens.json: %v", err)
	}
	if len(ref.Cases) < 100 {
		t.Fatalf("tokens.json has %d cases", len(ref.Cases))
	}
	return ref.Cases
}

func TestSelfTest(t *testing.T) {
	m := loadRealModel(t)
	low, err := SelfTest(context.Background(), m)
	if err != nil || low < MinSelfTestCosine {
		t.Fatalf("SelfTest = %v, %v", low, err)
	}
	// The built-in cases are those of testdata/reference.json.
	ref := readReference(t)
	built, err := readSelfTestCases()
	if err != nil || len(built) == 0 {
		t.Fatalf("selftest.json: %v", err)
	}
	for _, b := range built {
		found := false
		for _, c := range ref.Cases {
			if c.Text == b.Text && slices.Equal(c.Vector, b.Vector) {
				found = true
			}
		}
		if !found {
			t.Errorf("self-test case %q is not in reference.json", b.Text)
		}
	}
}
