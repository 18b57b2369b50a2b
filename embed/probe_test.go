package embed_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/embed/embedtest"
)

func TestNoFetchNeverDownloads(t *testing.T) {
	_, err := embed.Open(context.Background(), embed.UseLite, embed.Options{
		CacheDir: t.TempDir(), NoFetch: true,
		// Were a download tried, it would go here and fail differently.
		Getenv: func(k string) string {
			if k == "MEMMINER_MODEL_URL" {
				return "http://127.0.0.1:1/never.tgz"
			}
			return ""
		},
	})
	if err == nil || !strings.Contains(err.Error(), "memminer model fetch") {
		t.Fatalf("NoFetch with an empty cache: %v", err)
	}
}

func TestProbe(t *testing.T) {
	ctx := context.Background()
	if err := embed.Probe(ctx, &embedtest.Hashing{}, time.Second); err != nil {
		t.Fatalf("working embedder: %v", err)
	}
	down := errors.New("connection refused")
	if err := embed.Probe(ctx, &embedtest.Hashing{Err: down}, time.Second); !errors.Is(err, down) {
		t.Fatalf("failing embedder: %v", err)
	}
}
