package harness

import (
	"context"
	"os"
	"testing"

	"github.com/memminer/memminer/embed"
)

// BuiltinModel opens the built-in model (use-lite) for a bench test, from
// the user's model cache. Without it the test is skipped, unless under CI
// (env CI set), where it fails.
func BuiltinModel(tb testing.TB) embed.Embedder {
	tb.Helper()
	e, err := OpenModel(context.Background(), embed.UseLite)
	if err != nil {
		if os.Getenv("CI") == "" {
			tb.Skipf("built-in model unavailable: %v", err)
		}
		tb.Fatal(err)
	}
	return e
}
