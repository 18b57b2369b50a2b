package daemon

import (
	"errors"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/remember"
	"github.com/memminer/memminer/wakeup"
)

// This file is how the control socket says an error: a code per sentinel
// error, and the typed errors' details. The requests and results it
// carries are package api's.

// Error codes on the wire, and the sentinel errors they map to.
const (
	codeEmpty             = "empty"
	codeUnknownWing       = "unknown_wing"
	codeWakeupEmpty       = "wakeup_empty"
	codeWakeupUnknownWing = "wakeup_unknown_wing"
	codeModelMismatch     = "model_mismatch"
	codeOtherModel        = "other_model"
	codeReadOnly          = "read_only"
	codeShuttingDown      = "shutting_down"
	codeBadRequest        = "bad_request"
	codeRememberBad       = "remember_bad_request"
	codeNoHive            = "no_hive"
	codeOutsideHive       = "outside_hive"
	codeOutsideAgentDir   = "outside_agent_dir"
	codeNotMarked         = "not_marked"
	codeConflict          = "conflict"
	codeHashMismatch      = "hash_mismatch"
	codeBusy              = "busy"
	codeNotMined          = "not_mined"
	codeOtherHive         = "other_hive"
	codeNeedsWing         = "needs_wing"
	codeAgentNeedsWing    = "agent_needs_wing"
	codeBadWingID         = "bad_wing_id"
	codeAgentExists       = "agent_exists"
	codeInternal          = "internal"
)

// codeErrors is ordered: errorCode picks the first sentinel err matches.
var codeErrors = []struct {
	code string
	err  error
}{
	{codeEmpty, palace.ErrEmpty},
	{codeUnknownWing, palace.ErrUnknownWing},
	{codeWakeupEmpty, wakeup.ErrEmpty},
	{codeWakeupUnknownWing, wakeup.ErrUnknownWing},
	{codeModelMismatch, palace.ErrModelMismatch},
	{codeOtherModel, ErrOtherModel},
	{codeReadOnly, palace.ErrReadOnly},
	{codeShuttingDown, ErrNotRunning},
	{codeRememberBad, remember.ErrBadRequest},
	{codeNoHive, remember.ErrNoHive},
	{codeOutsideHive, remember.ErrOutsideHive},
	{codeOutsideAgentDir, remember.ErrOutsideAgentDir},
	{codeConflict, remember.ErrConflict},
	{codeHashMismatch, remember.ErrHashMismatch},
	{codeBusy, remember.ErrBusy},
	{codeNotMined, remember.ErrNotMined},
	{codeNotMarked, remember.ErrNotMarked},
	{codeOtherHive, ErrOtherHive},
	{codeNeedsWing, mine.ErrNeedsWing},
	{codeAgentNeedsWing, mine.ErrAgentNeedsWing},
	{codeBadWingID, hive.ErrBadWingID},
	{codeAgentExists, mine.ErrAgentExists},
}

// errorBody is the JSON of a failed request. ModelMismatch, null for
// other errors, names the wings of a model_mismatch, so a client tells the
// user what a search in its own process would; OtherModel, null for other
// errors, names the daemon's model in an other_model refusal;
// SupersedesRef, null for other errors, is remember's refused reference,
// which the CLI words with its flag's name.
type errorBody struct {
	Error         string                     `json:"error"`
	Code          string                     `json:"code"`
	ModelMismatch *palace.ModelMismatchError `json:"model_mismatch"`
	OtherModel    *OtherModelError           `json:"other_model"`
	OtherHive     *OtherHiveError            `json:"other_hive"`
	SupersedesRef *remember.RefError         `json:"supersedes_ref"`
}

// newErrorBody is err as the daemon answers it.
func newErrorBody(err error) errorBody {
	eb := errorBody{Error: err.Error(), Code: errorCode(err)}
	var mm *palace.ModelMismatchError
	if errors.As(err, &mm) {
		eb.ModelMismatch = mm
	}
	var om *OtherModelError
	if errors.As(err, &om) {
		eb.OtherModel = om
	}
	var oh *OtherHiveError
	if errors.As(err, &oh) {
		eb.OtherHive = oh
	}
	var ref *remember.RefError
	if errors.As(err, &ref) {
		eb.SupersedesRef = ref
	}
	return eb
}

// detail is the typed error eb sends the details of, as newErrorBody set
// it, or nil.
func (eb errorBody) detail() error {
	switch {
	case eb.ModelMismatch != nil:
		return eb.ModelMismatch
	case eb.OtherModel != nil:
		return eb.OtherModel
	case eb.OtherHive != nil:
		return eb.OtherHive
	case eb.SupersedesRef != nil:
		return eb.SupersedesRef
	}
	return nil
}

// RemoteError is an error the daemon returned. Its text is the daemon's
// message unchanged, errors.Is matches the sentinel its code stands for
// (palace.ErrEmpty, palace.ErrUnknownWing, ErrOtherModel, …), and
// errors.As finds the typed error the daemon sent the details of (a
// *palace.ModelMismatchError, an *OtherModelError, an *OtherHiveError or a
// *remember.RefError).
type RemoteError struct {
	Code    string
	Message string
	detail  error
}

func (e *RemoteError) Error() string { return e.Message }

// Unwrap returns the typed error the daemon sent the details of, or nil.
func (e *RemoteError) Unwrap() error { return e.detail }

// Is reports whether target is the sentinel error of e's code.
func (e *RemoteError) Is(target error) bool {
	for _, c := range codeErrors {
		if c.code == e.Code {
			return c.err == target
		}
	}
	return false
}

// errorCode classifies err for the wire.
func errorCode(err error) string {
	for _, c := range codeErrors {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return codeInternal
}
