package api

import (
	"errors"
	"fmt"
	"time"
)

// Errors callers of the control socket tell apart.
var (
	// ErrNotRunning means no daemon answers on the palace's socket.
	ErrNotRunning = errors.New("no memminer daemon is running for this palace")
	// ErrNoAnswer means a daemon accepted a read request on the socket and
	// did not start answering in time; such errors match ErrNotRunning too.
	ErrNoAnswer = errors.New("the daemon did not answer")
	// ErrOtherModel means the daemon serves another embedding model than
	// the caller is configured with.
	ErrOtherModel = errors.New("the daemon uses another embedding model")
	// ErrBadRequest means a request has a field that cannot be read; the
	// error's text names it.
	ErrBadRequest = errors.New("bad request")
)

// OtherModelError is the daemon's refusal of a caller configured with
// another embedding model than its own. It matches ErrOtherModel.
type OtherModelError struct {
	// PID is the daemon's process id.
	PID int `json:"pid"`
	// Daemon is the model spec the daemon serves the palace with.
	Daemon string `json:"daemon"`
	// Caller is the model spec the caller asked with.
	Caller string `json:"caller"`
}

func (e *OtherModelError) Error() string {
	return fmt.Sprintf("the daemon (pid %d) serving this palace uses model %s, not %s", e.PID, e.Daemon, e.Caller)
}

// Is reports whether target is ErrOtherModel.
func (e *OtherModelError) Is(target error) bool { return target == ErrOtherModel }

// OtherHiveError is the daemon's refusal of a mine of another hive than
// its own, or of one of that hive's agent directories: its next scan
// would mine its own hive's places back over it. It matches ErrOtherHive.
type OtherHiveError struct {
	// PID is the daemon's process id.
	PID int `json:"pid"`
	// Hive is the hive the daemon serves.
	Hive string `json:"hive"`
	// Path is the path the caller asked to mine.
	Path string `json:"path"`
}

func (e *OtherHiveError) Error() string {
	return fmt.Sprintf("the running daemon (pid %d) serves hive %s; a mine of %s would be undone at its next scan", e.PID, e.Hive, e.Path)
}

// Is reports whether target is ErrOtherHive.
func (e *OtherHiveError) Is(target error) bool { return target == ErrOtherHive }

// ErrOtherHive means the daemon serving the palace mines another hive than
// the caller's.
var ErrOtherHive = errors.New("the daemon mines another hive")

// ErrConnectionLost is matched by the error of a repeatable request whose
// connection broke after it was sent: the daemon may have carried it out
// (remember retries with remember.Request.Retry).
var ErrConnectionLost = errors.New("the connection to the daemon broke")

// NoAnswerError is the error of a read request the daemon accepted and
// did not start answering in time: a daemon stopped (SIGSTOP) or wedged.
// It matches ErrNotRunning, so callers fall back to the palace, and
// ErrNoAnswer, so they can say why.
type NoAnswerError struct {
	Socket string        // the control socket asked
	Path   string        // the request's path
	After  time.Duration // how long it waited
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("the daemon on %s accepted %s and did not answer within %s", e.Socket, e.Path, e.After)
}

// Is makes the error match ErrNotRunning and ErrNoAnswer.
func (e *NoAnswerError) Is(target error) bool {
	return target == ErrNotRunning || target == ErrNoAnswer
}

// badRequestError is a request field that cannot be read; its text is
// the field's, and it matches ErrBadRequest.
type badRequestError struct{ err error }

func (e *badRequestError) Error() string { return e.err.Error() }

func (e *badRequestError) Unwrap() error { return e.err }

// Is reports whether target is ErrBadRequest.
func (e *badRequestError) Is(target error) bool { return target == ErrBadRequest }
