package uselite

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/memminer/memminer/internal/atomicfile"
)

func TestBundleRoundTrip(t *testing.T) {
	b := newSynthetic(t).bundle(t)
	data, err := b.encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeBundle(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, b) {
		t.Error("decoded bundle differs from the encoded one")
	}
	path := filepath.Join(t.TempDir(), convertedName)
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Path() != path || m.Dim() != 16 || m.Model() != ModelID {
		t.Errorf("Path, Dim, Model = %q, %d, %q", m.Path(), m.Dim(), m.Model())
	}
}

func TestCorruptFileDetected(t *testing.T) {
	data, err := newSynthetic(t).bundle(t).encode()
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		d := append([]byte(nil), data...)
		d[i] ^= 0x01
		return d
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"bad magic", flip(0)},
		{"flipped bit in weights", flip(len(data) / 2)},
		{"flipped bit in checksum", flip(len(data) - 1)},
		{"truncated", data[:len(data)-100]},
		{"header only", data[:len(fileMagic)+40]},
		{"extra byte", append(append([]byte(nil), data...), 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), convertedName)
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Open(path); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Open: err = %v, want ErrCorrupt", err)
			}
			if err := Verify(path); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Verify: err = %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestConvertRejectsBadPackages(t *testing.T) {
	syn := newSynthetic(t)
	pf, err := readPackage(bytesReader(syn.tgz))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(pf *packageFiles)
		want   string
	}{
		{"missing shard", func(pf *packageFiles) { delete(pf.shards, "group1-shard2of2") }, "missing"},
		{"short shard", func(pf *packageFiles) {
			pf.shards["group1-shard2of2"] = pf.shards["group1-shard2of2"][:8]
		}, "shards end"},
		{"bad model.json", func(pf *packageFiles) { pf.modelJSON = []byte("{") }, "model.json"},
		{"bad vocab.json", func(pf *packageFiles) { pf.vocabJSON = []byte(`[["a"]]`) }, "vocab.json"},
		{"missing weight", func(pf *packageFiles) {
			pf.modelJSON = []byte(strings.Replace(string(pf.modelJSON), "tanh_layer_0/bias", "tanh_layer_0/other", 1))
		}, "tanh.b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := *pf
			c.shards = map[string][]byte{}
			for k, v := range pf.shards {
				c.shards[k] = v
			}
			tt.mutate(&c)
			_, err := convert(&c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("convert: err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// checkVectors fails unless every vector has dim finite values and unit
// length.
func checkVectors(t *testing.T, vecs [][]float32, n, dim int) {
	t.Helper()
	if len(vecs) != n {
		t.Fatalf("%d vectors, want %d", len(vecs), n)
	}
	for i, v := range vecs {
		if len(v) != dim {
			t.Fatalf("vector %d has %d values, want %d", i, len(v), dim)
		}
		var ss float64
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("vector %d has %v", i, x)
			}
			ss += float64(x) * float64(x)
		}
		if math.Abs(ss-1) > 1e-4 {
			t.Errorf("vector %d has squared norm %v, want 1", i, ss)
		}
	}
}

// oddTexts are inputs Embed must survive.
func oddTexts() []string {
	return []string{
		"", " ", "?", "!!!", "\xff\xfe\xfd", "a\x00b", "\u200b", strings.Repeat("ab c ", 200),
		strings.Repeat("x", 1<<20), "e\u0301", "😀😀😀", "\t\n\r",
	}
}

func TestEmbedOddInputsSynthetic(t *testing.T) {
	m := newSynthetic(t).model(t)
	texts := oddTexts()
	vecs, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, vecs, len(texts), m.Dim())
}

// TestEmbedBatchingSynthetic checks that a vector does not depend on the
// other texts in its batch, including when the batch is split.
func TestEmbedBatchingSynthetic(t *testing.T) {
	m := newSynthetic(t).model(t)
	var texts []string
	for i := range 60 {
		texts = append(texts, strings.Repeat("ab c ", i%40+1)+strings.Repeat("b", i%3))
	}
	batch, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, batch, len(texts), m.Dim())
	for i, text := range texts {
		single, err := m.Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		for j := range single[0] {
			if d := single[0][j] - batch[i][j]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("text %d: batched %v, alone %v at %d", i, batch[i][j], single[0][j], j)
			}
		}
	}
}

func TestEmbedEmptyAndCanceled(t *testing.T) {
	m := newSynthetic(t).model(t)
	vecs, err := m.Embed(context.Background(), nil)
	if err != nil || len(vecs) != 0 {
		t.Errorf("Embed(nil) = %v, %v", vecs, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"ab"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with canceled context: err = %v", err)
	}
}

// TestEmbedClipsToMaxPieces checks that pieces past MaxPieces do not
// change the vector.
func TestEmbedClipsToMaxPieces(t *testing.T) {
	m := newSynthetic(t).model(t)
	base := strings.Repeat("ab ", MaxPieces)
	if n := len(m.Tokenize(base)); n < MaxPieces {
		t.Fatalf("base text has %d pieces, want >= %d", n, MaxPieces)
	}
	vecs, err := m.Embed(context.Background(), []string{base, base + " c c c c"})
	if err != nil {
		t.Fatal(err)
	}
	for j := range vecs[0] {
		if vecs[0][j] != vecs[1][j] {
			t.Fatalf("vectors differ at %d although they share the first %d pieces", j, MaxPieces)
		}
	}
}

// TestEmbedConcurrent runs Embed from several goroutines at once; each
// must get the vectors a lone call gets (run with -race).
func TestEmbedConcurrent(t *testing.T) {
	m := newSynthetic(t).model(t)
	texts := []string{"ab c", "c c ab", strings.Repeat("ab ", 50), "b"}
	want, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			got, err := m.Embed(context.Background(), texts)
			if err != nil {
				errs <- err
				return
			}
			if !reflect.DeepEqual(got, want) {
				errs <- errors.New("concurrent Embed returned different vectors")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func FuzzEmbed(f *testing.F) {
	for _, s := range oddTexts()[:8] {
		f.Add(s)
	}
	m := newSynthetic(f).model(f)
	f.Fuzz(func(t *testing.T, s string) {
		vecs, err := m.Embed(context.Background(), []string{s, "ab"})
		if err != nil {
			t.Fatal(err)
		}
		checkVectors(t, vecs, 2, m.Dim())
	})
}
