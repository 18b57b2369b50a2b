// Package bearer is memminer's shared secret for HTTP endpoints other
// local users must not call (MCP over streamable HTTP, the metrics): a
// random token in a file only its owner can read, and the check of a
// request's "Authorization: Bearer TOKEN" header against it.
package bearer

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/memminer/memminer/internal/atomicfile"
)

// FileName is the token file's name in memminer's config directory.
const FileName = "http-token"

// tokenBytes is the token's entropy: 256 bits.
const tokenBytes = 32

// ErrUnsafeFile means the token file is readable or writable by users
// other than its owner, or owned by another user: its token cannot be
// trusted to be secret.
var ErrUnsafeFile = errors.New("token file is not private")

// Load reads the token in path, creating the file (mode 0600, its
// directory 0700) with a new random token when it does not exist; created
// says so. Two processes creating it at once end with one token. A file
// another user owns, or that group or others may read, is ErrUnsafeFile.
func Load(path string) (token string, created bool, err error) {
	token, err = read(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return token, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("token: %w", err)
	}
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", false, fmt.Errorf("token: %w", err)
	}
	fresh := base64.RawURLEncoding.EncodeToString(raw)
	// Written beside the target, then linked into place: the link fails
	// when another process was first, and that process's token is used.
	tmp := path + ".new-" + base64.RawURLEncoding.EncodeToString(raw[:6])
	if err := atomicfile.Write(tmp, []byte(fresh+"\n"), 0o600); err != nil {
		return "", false, fmt.Errorf("token: %w", err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			token, err = read(path)
			return token, false, err
		}
		return "", false, fmt.Errorf("token: %w", err)
	}
	return fresh, true, atomicfile.SyncDir(filepath.Dir(path))
}

// read reads an existing token file, refusing one that is not private.
func read(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	if err := private(fi); err != nil {
		return "", fmt.Errorf("token %s: %w: %v; fix it with chmod 600 %s, or remove it to have a new one made", path, ErrUnsafeFile, err, path)
	}
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	token := strings.TrimSpace(string(buf[:n]))
	if len(token) < 16 {
		return "", fmt.Errorf("token %s is too short (%d characters); remove it to have a new one made", path, len(token))
	}
	return token, nil
}

// Authorized reports whether r carries "Authorization: Bearer token",
// comparing in constant time so the answer's timing does not tell how
// much of a guess was right.
func Authorized(r *http.Request, token string) bool {
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return Equal(strings.TrimSpace(got), token)
}

// Equal reports whether got is token (never when token is empty),
// comparing in constant time: every check of a presented token (a
// header, a cookie, a query parameter) goes through it.
func Equal(got, token string) bool {
	if token == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// Require serves next only to requests Authorized with token; others get
// 401 with a WWW-Authenticate challenge naming the bearer scheme (and no
// OAuth metadata: clients should send the token, not start a login).
func Require(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Authorized(r, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="memminer"`)
			http.Error(w, "memminer: missing or wrong bearer token; send Authorization: Bearer TOKEN (memminer mcp token prints it)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
