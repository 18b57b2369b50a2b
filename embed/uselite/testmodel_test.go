package uselite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestMain runs the tests, or, in the child processes of
// TestFetchTwoProcesses, one fetch.
func TestMain(m *testing.M) {
	if cache := os.Getenv("USELITE_HELPER_CACHE"); cache != "" {
		if err := helperFetchProcess(cache, os.Getenv("USELITE_HELPER_URL")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// envTestModelCache names the environment variable with the cache
// directory tests use for the real model, so CI downloads it once for all
// packages.
const envTestModelCache = "MEMMINER_TEST_MODEL_CACHE"

var (
	realOnce  sync.Once
	realModel *Model
	realErr   error
)

// testCacheDir is where tests look for (and under CI, put) the real model.
func testCacheDir(t testing.TB) string {
	if d := os.Getenv(envTestModelCache); d != "" {
		return d
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "memminer", "models")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("user cache dir: %v", err)
	}
	return filepath.Join(d, "memminer", "models")
}

// loadRealModel returns the real model. Under CI=true it fetches the model
// when missing and fails the test if that fails; otherwise it skips the
// test when no converted model is in the cache.
func loadRealModel(t testing.TB) *Model {
	t.Helper()
	opts := Options{CacheDir: testCacheDir(t)}
	realOnce.Do(func() {
		path, err := ConvertedPath(opts)
		if err != nil {
			realErr = err
			return
		}
		if os.Getenv("CI") == "" {
			if _, err := os.Stat(path); err != nil {
				realErr = errSkip
				return
			}
			realModel, realErr = Open(path)
			return
		}
		realModel, realErr = Load(context.Background(), opts)
	})
	if realErr == errSkip {
		t.Skipf("no converted model under %s (set CI=true to download it, or run `memminer model fetch`)", opts.CacheDir)
	}
	if realErr != nil {
		t.Fatalf("load real model: %v", realErr)
	}
	return realModel
}

type skipError struct{}

func (skipError) Error() string { return "skip" }

var errSkip error = skipError{}
