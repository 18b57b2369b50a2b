package bearer

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

func TestLoadMakesOnePrivateToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config", "memminer", FileName)
	// Processes starting at once end with one token.
	tokens := make([]string, 8)
	created := make([]bool, 8)
	var wg sync.WaitGroup
	for i := range tokens {
		wg.Go(func() {
			var err error
			if tokens[i], created[i], err = Load(path); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	made := 0
	for i, tok := range tokens {
		if tok != tokens[0] || len(tok) != 43 {
			t.Fatalf("tokens %q", tokens)
		}
		if created[i] {
			made++
		}
	}
	if made != 1 {
		t.Errorf("%d processes say they made the token", made)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v %v", fi, err)
	}
	if di, err := os.Stat(filepath.Dir(path)); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("token dir %v %v", di, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(path); !errors.Is(err, ErrUnsafeFile) {
		t.Errorf("a token others may read: %v", err)
	}
}

func TestRequire(t *testing.T) {
	const token = "the-right-token-0123456789"
	h := Require(token, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	tests := []struct {
		header string
		code   int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer " + token, http.StatusTeapot},
		{"bearer " + token, http.StatusTeapot},
		{"Bearer " + token + "x", http.StatusUnauthorized},
		{"Bearer " + token[:10], http.StatusUnauthorized},
		{"Basic " + token, http.StatusUnauthorized},
		{token, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if tt.header != "" {
			r.Header.Set("Authorization", tt.header)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.code {
			t.Errorf("%q: %d, want %d", tt.header, w.Code, tt.code)
		}
		if w.Code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("%q: no challenge", tt.header)
		}
	}
}

// TestEqual: only the token itself matches, and nothing matches an empty
// token (a server without one must not let an empty guess in).
func TestEqual(t *testing.T) {
	tests := []struct {
		got, token string
		want       bool
	}{
		{"the-right-token", "the-right-token", true},
		{"the-right-token ", "the-right-token", false},
		{"the-right-toke", "the-right-token", false},
		{"", "the-right-token", false},
		{"", "", false},
		{"x", "", false},
	}
	for _, tt := range tests {
		if got := Equal(tt.got, tt.token); got != tt.want {
			t.Errorf("Equal(%q, %q) = %t, want %t", tt.got, tt.token, got, tt.want)
		}
	}
}

// TestLoadRefusesAnotherUsersToken: a token file the user does not own
// could have been planted; it is not used.
func TestLoadRefusesAnotherUsersToken(t *testing.T) {
	uid, gid := testutil.OtherUser(t)
	path := filepath.Join(t.TempDir(), FileName)
	if _, _, err := Load(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(path); !errors.Is(err, ErrUnsafeFile) {
		t.Errorf("another user's token file: %v", err)
	}
}
