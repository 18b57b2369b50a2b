package embed_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
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
	if !errors.Is(err, embed.ErrNotFetched) {
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

func TestProbeOptionIsOneAttempt(t *testing.T) {
	// A port nothing listens on: the server is down.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, spec := range []string{"ollama:nomic-embed-text", "openai:text-embedding-3-small"} {
		t.Run(spec, func(t *testing.T) {
			var logs strings.Builder
			prev := slog.Default()
			slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
			defer slog.SetDefault(prev)
			env := map[string]string{"OLLAMA_HOST": addr, "OPENAI_BASE_URL": "http://" + addr + "/v1"}
			e, err := embed.Open(context.Background(), spec, embed.Options{Probe: true, Getenv: func(k string) string { return env[k] }})
			if err != nil {
				t.Fatal(err)
			}
			err = embed.Probe(context.Background(), e, 10*time.Second)
			if err == nil || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "attempts") {
				t.Fatalf("probe of a server that is down: %v", err)
			}
			if logs.Len() > 0 {
				t.Fatalf("a probe retried: %s", logs.String())
			}
		})
	}
}

func TestRemote(t *testing.T) {
	for spec, want := range map[string]bool{
		"":                               false,
		embed.Lexical:                    false,
		embed.UseLite:                    false,
		"ollama:nomic-embed-text":        true,
		" openai:text-embedding-3-small": true,
		"openaix:foo":                    false,
	} {
		if got := embed.Remote(spec); got != want {
			t.Errorf("Remote(%q) = %t, want %t", spec, got, want)
		}
	}
}
