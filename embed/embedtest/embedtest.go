// Package embedtest provides a deterministic embedder for tests: no model,
// no network, and it counts what it was asked to embed.
package embedtest

import (
	"context"
	"hash/fnv"
	"strings"
	"sync"
	"unicode"

	"github.com/memminer/memminer/embed"
)

// Hashing embeds a text as a bag of its lower-cased words hashed into Dim
// buckets, so texts sharing words are close. It is safe for concurrent use.
type Hashing struct {
	// ID is returned by Model; empty means "test-hashing".
	ID string
	// Dim is the vector size; zero means 64.
	Dim int
	// Err, when set, is returned by every Embed call.
	Err error

	mu    sync.Mutex
	calls int
	texts int
	words int
}

// Model returns the embedder's model id.
func (h *Hashing) Model() string {
	if h.ID == "" {
		return "test-hashing"
	}
	return h.ID
}

// Embed returns one vector per text.
func (h *Hashing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	if embed.IsForWords(ctx) {
		h.words += len(texts)
	} else {
		h.calls++
		h.texts += len(texts)
	}
	h.mu.Unlock()
	if h.Err != nil {
		return nil, h.Err
	}
	dim := h.Dim
	if dim == 0 {
		dim = 64
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, dim)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			f := fnv.New32a()
			f.Write([]byte(w))
			v[f.Sum32()%uint32(dim)]++
		}
		v[0] += 0.01 // never the zero vector
		out[i] = v
	}
	return out, nil
}

// Words is how many single words (embed.ForWords) Embed was given; Calls
// and Texts leave them out.
func (h *Hashing) Words() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.words
}

// Calls is how many times Embed was called.
func (h *Hashing) Calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

// Texts is how many texts Embed was given in all.
func (h *Hashing) Texts() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.texts
}

// Reset zeroes the counters.
func (h *Hashing) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls, h.texts, h.words = 0, 0, 0
}
