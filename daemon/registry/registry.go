// Package registry is the per-user record of running daemons: each daemon
// writes a small JSON file naming its palace, hive and control socket
// while it serves, and removes it when it stops. A command that opened one
// palace can then tell which other palaces running daemons serve.
//
// Records outlive a daemon that is killed; List ignores and removes the
// records of daemons that are gone (their process has exited or their
// socket does not answer), and never waits long for an answer.
package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/internal/atomicfile"
)

// Record describes one running daemon.
type Record struct {
	// PID is the daemon's process id.
	PID int `json:"pid"`
	// Palace is the absolute path of the palace it serves.
	Palace string `json:"palace"`
	// Hive is the absolute path of the hive it mines.
	Hive string `json:"hive"`
	// Socket is its control socket.
	Socket string `json:"socket"`
	// Started is when it began to serve.
	Started time.Time `json:"started"`
	// Stopped is set by List when the daemon's process is stopped
	// (SIGSTOP), so its socket accepts and nothing answers until it is
	// resumed. Only Linux tells; elsewhere it is always false.
	Stopped bool `json:"-"`
}

// dialTimeout bounds the check that a record's socket answers: a daemon
// accepts at once, so a socket that does not is no daemon to point to.
const dialTimeout = 500 * time.Millisecond

// maxRecordBytes bounds a record file read; a real one is a few hundred bytes.
const maxRecordBytes = 64 << 10

// Dir is the directory of the records, for the environment getenv reads:
// memminer/daemons in config.RuntimeDir.
func Dir(getenv func(string) string) string {
	return filepath.Join(config.RuntimeDir(getenv), "memminer", "daemons")
}

// fileName is rec's file in the directory: one per process and socket, so
// daemons in one process (tests, a reload) never share a record.
func fileName(rec Record) string {
	sum := sha256.Sum256([]byte(rec.Socket))
	return fmt.Sprintf("%d-%s.json", rec.PID, hex.EncodeToString(sum[:6]))
}

// ErrUnsafeDir means the registry directory is not the user's alone: it
// is not owned by the user, or others may read or write it (its mode is
// not 0700), or it is a link. Its records could be another user's
// inventions, so the registry is not used. UnsafeDirError says why.
var ErrUnsafeDir = errors.New("daemon registry directory is not private")

// UnsafeDirError is ErrUnsafeDir for one directory, with the reason.
type UnsafeDirError struct {
	Dir, Reason string
}

func (e *UnsafeDirError) Error() string {
	return fmt.Sprintf("the daemon registry %s is not private (%s): it must be a directory of yours with mode 0700; it is ignored", e.Dir, e.Reason)
}

// Is makes errors.Is(err, ErrUnsafeDir) hold.
func (e *UnsafeDirError) Is(target error) bool { return target == ErrUnsafeDir }

// checkDir returns an UnsafeDirError when dir is not private.
func checkDir(dir string) error {
	if p := dirProblem(dir); p != "" {
		return &UnsafeDirError{Dir: dir, Reason: p}
	}
	return nil
}

// Register writes rec into dir (made, mode 0700, if missing) and returns
// the function that removes it again. A dir that is not private
// (ErrUnsafeDir) is not written.
func Register(dir string, rec Record) (unregister func() error, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("daemon registry: %w", err)
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("daemon registry: %w", err)
	}
	path := filepath.Join(dir, fileName(rec))
	if err := atomicfile.Write(path, append(data, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("daemon registry: %w", err)
	}
	return func() error {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("daemon registry: %w", err)
		}
		return nil
	}, nil
}

// List returns the records in dir of daemons that run and answer on
// their socket, by palace, marking those whose process is stopped. The record of a daemon that is gone is
// removed; one that cannot be read, or whose socket is not known to be
// gone by the time ctx ends, is left alone and not returned. A missing
// dir holds no records. A dir that is not private is not read
// (ErrUnsafeDir); a record file another user owns is skipped, and so is a
// record whose socket is served by another user (SO_PEERCRED on Linux,
// the socket file's owner elsewhere): its palace may be a spoof.
func List(ctx context.Context, dir string) ([]Record, error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("daemon registry: %w", err)
	}
	var live []Record
	for _, e := range entries {
		if ctx.Err() != nil {
			break
		}
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		rec, err := read(path)
		if err != nil {
			continue
		}
		switch state(ctx, rec) {
		case running:
			rec.Stopped = processStopped(rec.PID)
			live = append(live, rec)
		case gone:
			_ = os.Remove(path)
		}
	}
	slices.SortFunc(live, func(a, b Record) int { return strings.Compare(a.Palace, b.Palace) })
	return live, nil
}

func read(path string) (Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return Record{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Record{}, err
	}
	if p := ownerProblem(fi); p != "" {
		return Record{}, errors.New("record " + p)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRecordBytes))
	if err != nil {
		return Record{}, err
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return Record{}, err
	}
	if rec.PID <= 0 || rec.Socket == "" || rec.Palace == "" {
		return Record{}, errors.New("incomplete record")
	}
	return rec, nil
}

// daemonState is what a record's daemon was found to be.
type daemonState int

const (
	running daemonState = iota
	gone                // its process exited, or its socket refuses
	unknown             // no answer in time
	foreign             // another user serves its socket
)

func state(ctx context.Context, rec Record) daemonState {
	if !processAlive(rec.PID) {
		return gone
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dctx, "unix", rec.Socket)
	if err == nil {
		defer conn.Close()
		if peerProblem(conn, rec.Socket) != "" {
			return foreign
		}
		return running
	}
	// Refused or missing: nothing listens there any more (a daemon killed
	// with its pid since reused, or one stopping right now).
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, fs.ErrNotExist) {
		return gone
	}
	return unknown
}
