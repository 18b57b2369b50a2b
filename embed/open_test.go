package embed_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memminer/memminer/embed"
)

func TestOpenRemoteSpecs(t *testing.T) {
	tests := []struct {
		name      string
		spec      string
		env       map[string]string
		wantModel string // "" with no error: Open returns a nil Embedder
		wantIs    error
		wantErr   string
	}{
		{name: "ollama", spec: "ollama:nomic-embed-text", wantModel: "ollama:nomic-embed-text"},
		{name: "ollama with tag", spec: "ollama:all-minilm:l6-v2", wantModel: "ollama:all-minilm:l6-v2"},
		{
			name:      "openai with key",
			spec:      "  openai:text-embedding-3-small ",
			env:       map[string]string{"OPENAI_API_KEY": "sk-open-test"},
			wantModel: "openai:text-embedding-3-small",
		},
		{
			name:      "openai-compatible server without key",
			spec:      "openai:bge-small",
			env:       map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"},
			wantModel: "openai:bge-small",
		},
		{name: "lexical", spec: "lexical"},
		{name: "ollama without model", spec: "ollama:", wantIs: embed.ErrUnknownModel, wantErr: "want ollama:<model>"},
		{name: "ollama without colon", spec: "ollama", wantIs: embed.ErrUnknownModel, wantErr: "want ollama:<model>"},
		{name: "openai without model", spec: "openai: ", wantIs: embed.ErrUnknownModel, wantErr: "want openai:<model>"},
		{name: "unknown", spec: "nope", wantIs: embed.ErrUnknownModel, wantErr: "ollama:<model>, openai:<model>"},
		{name: "openai without key", spec: "openai:text-embedding-3-small", wantErr: "OPENAI_API_KEY"},
		{
			name:    "bad OLLAMA_HOST",
			spec:    "ollama:nomic-embed-text",
			env:     map[string]string{"OLLAMA_HOST": "gopher://127.0.0.1"},
			wantErr: "scheme must be http or https",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := embed.Open(context.Background(), tc.spec, embed.Options{
				Getenv: func(k string) string { return tc.env[k] },
			})
			if tc.wantErr != "" || tc.wantIs != nil {
				if err == nil {
					t.Fatalf("Open(%q) succeeded, want an error", tc.spec)
				}
				if e != nil {
					t.Errorf("Open(%q) returned embedder %v with error %v; want nil", tc.spec, e, err)
				}
				if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
					t.Errorf("Open(%q) error %v is not %v", tc.spec, err, tc.wantIs)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Open(%q) error %q does not contain %q", tc.spec, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", tc.spec, err)
			}
			if tc.wantModel == "" {
				if e != nil {
					t.Errorf("Open(%q) = %v, want nil embedder", tc.spec, e)
				}
				return
			}
			if e == nil || e.Model() != tc.wantModel {
				t.Fatalf("Open(%q) = %v, want model %q", tc.spec, e, tc.wantModel)
			}
		})
	}
}

func TestSpecsListsRemoteBackends(t *testing.T) {
	specs := embed.Specs()
	for _, want := range []string{"ollama:<model>", "openai:<model>"} {
		if !slices.Contains(specs, want) {
			t.Errorf("Specs() = %q, missing %q", specs, want)
		}
	}
}

// TestOpenRemoteEndToEnd checks that Open wires the environment through to
// the backends: each spec embeds against a loopback server found through
// its environment variables.
func TestOpenRemoteEndToEnd(t *testing.T) {
	vec := []float32{0.5, -1, 2}
	mux := http.NewServeMux()
	var gotAuth string
	mux.HandleFunc("POST /api/embed", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "nomic-embed-text" {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		embs := make([][]float32, len(req.Input))
		for i := range embs {
			embs[i] = vec
		}
		json.NewEncoder(w).Encode(map[string]any{"embeddings": embs})
	})
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "text-embedding-3-small" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		data := make([]map[string]any, len(req.Input))
		for i := range data {
			data[i] = map[string]any{"index": i, "embedding": vec}
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")

	tests := []struct {
		spec     string
		env      map[string]string
		wantAuth string
	}{
		// OLLAMA_HOST without a scheme, as ollama itself accepts it.
		{spec: "ollama:nomic-embed-text", env: map[string]string{"OLLAMA_HOST": hostPort}},
		{
			spec:     "openai:text-embedding-3-small",
			env:      map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1/", "OPENAI_API_KEY": "sk-e2e"},
			wantAuth: "Bearer sk-e2e",
		},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			e, err := embed.Open(context.Background(), tc.spec, embed.Options{
				Getenv: func(k string) string { return tc.env[k] },
			})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			got, err := e.Embed(context.Background(), []string{"first note", "second note"})
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			if want := [][]float32{vec, vec}; !reflect.DeepEqual(got, want) {
				t.Errorf("Embed = %v, want %v", got, want)
			}
			if tc.wantAuth != "" && gotAuth != tc.wantAuth {
				t.Errorf("Authorization = %q, want %q", gotAuth, tc.wantAuth)
			}
		})
	}
}
