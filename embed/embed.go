// Package embed turns note text into vectors for the palace.
//
// Every backend satisfies Embedder. The backends live in their own
// sub-packages (uselite, ollama, openai) and do not import this package;
// Open picks one from a model spec such as "use-lite", "lexical",
// "ollama:nomic-embed-text" or "openai:text-embedding-3-small".
package embed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/memminer/memminer/embed/internal/httpembed"
	"github.com/memminer/memminer/embed/ollama"
	"github.com/memminer/memminer/embed/openai"
	"github.com/memminer/memminer/embed/uselite"
)

// Embedder turns texts into vectors.
type Embedder interface {
	// Model is the stable id recorded with every vector in the palace,
	// e.g. "use-lite-0.2.0" or "ollama:nomic-embed-text". Two embedders with
	// the same Model produce comparable vectors.
	Model() string
	// Embed returns one vector per text, in order. Vectors need not be
	// normalised; the palace normalises them.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Lexical is the model id of the backend without vectors: search is BM25 alone.
const Lexical = "lexical"

// UseLite is the spec of the built-in model (package uselite): Universal
// Sentence Encoder lite, downloaded and converted on first use.
const UseLite = "use-lite"

// Default is the model spec used when none is configured.
const Default = UseLite

// Options carries what a backend may need besides its spec.
type Options struct {
	// CacheDir holds downloaded model files ($XDG_CACHE_HOME/memminer/models).
	CacheDir string
	// Getenv reads environment variables (OLLAMA_HOST, OPENAI_API_KEY, …);
	// nil means os.Getenv.
	Getenv func(string) string
	// NoFetch opens the built-in model only if it is already in the cache,
	// never downloading it (for status probes).
	NoFetch bool
	// Probe opens a remote backend for one short attempt per request (no
	// retries, ProbeTimeout), so a check of a server that is down answers
	// at once with the real cause. It implies NoFetch.
	Probe bool
}

// ProbeTimeout bounds one request of a backend opened with Options.Probe.
const ProbeTimeout = 2 * time.Second

// probeTuning makes t one short attempt.
func probeTuning(t *httpembed.Tuning) {
	t.MaxRetries, t.Timeout = -1, ProbeTimeout
}

// Errors Open returns that callers tell apart.
var (
	// ErrUnknownModel means no backend accepts the spec.
	ErrUnknownModel = errors.New("unknown embedding model")
	// ErrNotFetched means the built-in model is not in the cache and
	// Options.NoFetch (or Probe) forbade downloading it.
	ErrNotFetched = errors.New("the built-in model is not in the cache yet")
)

// Open returns the embedder for spec. For the lexical spec it returns
// (nil, nil): the palace then keeps no vectors.
func Open(ctx context.Context, spec string, opts Options) (Embedder, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = Default
	}
	if err := CheckSpec(spec); err != nil {
		return nil, err
	}
	name, arg, _ := strings.Cut(spec, ":")
	switch name {
	case Lexical:
		return nil, nil
	case UseLite:
		uo := uselite.Options{CacheDir: opts.CacheDir, Getenv: opts.Getenv}
		if opts.NoFetch || opts.Probe {
			path, err := uselite.ConvertedPath(uo)
			if err != nil {
				return nil, err
			}
			if _, err := os.Stat(path); err != nil {
				return nil, fmt.Errorf("%w (%s)", ErrNotFetched, path)
			}
			m, err := uselite.Open(path)
			if err != nil {
				return nil, err
			}
			return m, nil
		}
		m, err := uselite.Load(ctx, uo)
		if err != nil {
			return nil, err
		}
		return m, nil
	case "ollama":
		o := ollama.Options{Model: arg}
		if opts.Probe {
			probeTuning(&o.Tuning)
		}
		e, err := ollama.FromEnv(o, opts.Getenv)
		if err != nil {
			return nil, err
		}
		return e, nil
	case "openai":
		o := openai.Options{Model: arg}
		if opts.Probe {
			probeTuning(&o.Tuning)
		}
		e, err := openai.FromEnv(o, opts.Getenv)
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownModel, spec) // CheckSpec lets no other name through
}

// CheckSpec returns an error wrapping ErrUnknownModel when no backend
// accepts spec, without opening anything; "" is the default model.
func CheckSpec(spec string) error {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil
	}
	name, arg, _ := strings.Cut(spec, ":")
	switch name {
	case Lexical, UseLite:
		if arg != "" {
			return fmt.Errorf("%w %q: %q takes no argument", ErrUnknownModel, spec, name)
		}
	case "ollama":
		if strings.TrimSpace(arg) == "" {
			return fmt.Errorf("%w %q: want ollama:<model>, e.g. ollama:nomic-embed-text", ErrUnknownModel, spec)
		}
	case "openai":
		if strings.TrimSpace(arg) == "" {
			return fmt.Errorf("%w %q: want openai:<model>, e.g. openai:text-embedding-3-small", ErrUnknownModel, spec)
		}
	default:
		return fmt.Errorf("%w %q (want %s)", ErrUnknownModel, spec, strings.Join(Specs(), ", "))
	}
	return nil
}

// Remote reports whether spec names a backend reached over the network
// (ollama, openai): one that can stop answering after it opened fine, so
// a long-running process probes it to say whether it is available.
func Remote(spec string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(spec), ":")
	return name == "ollama" || name == "openai"
}

// Probe checks that e answers now by embedding one short text within
// timeout: a remote server may be down although its client opened fine.
func Probe(ctx context.Context, e Embedder, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vs, err := e.Embed(ctx, []string{"memminer status probe"})
	if err != nil {
		return err
	}
	if len(vs) != 1 || len(vs[0]) == 0 {
		return fmt.Errorf("%s returned no vector", e.Model())
	}
	return nil
}

// Specs lists the model specs Open understands, for help and error texts.
func Specs() []string {
	return []string{Lexical, UseLite, "ollama:<model>", "openai:<model>"}
}

type wordsKey struct{}

// ForWords marks ctx as the embedding of single words (the palace's word
// table and a query's words, for relevance) rather than of notes, so an
// embedder or a test can count the two apart.
func ForWords(ctx context.Context) context.Context {
	return context.WithValue(ctx, wordsKey{}, true)
}

// IsForWords reports whether ctx was marked by ForWords.
func IsForWords(ctx context.Context) bool {
	v, _ := ctx.Value(wordsKey{}).(bool)
	return v
}

// WordFrequency is implemented by an embedder whose vocabulary tells how
// common a word is (the built-in model's unigram pieces): search uses it to
// tell a query's everyday words that no note happens to use ("host") from
// words of another domain ("origami", "zorblax").
type WordFrequency interface {
	// WordLogProb is the natural log of the word's probability as one
	// word of text; common words score near -10, rare ones below -20.
	WordLogProb(word string) float64
}
