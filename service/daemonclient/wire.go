package daemonclient

import (
	"errors"
	"net/http"
	"path/filepath"
	"time"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
)

// SocketName is the control socket's file name in the palace directory.
const SocketName = "memminer.sock"

// Path returns the control socket of the palace in palaceDir.
func Path(palaceDir string) string { return filepath.Join(palaceDir, SocketName) }

// Error codes on the wire, and the sentinel errors they map to.
const (
	CodeEmpty             = "empty"
	CodeUnknownWing       = "unknown_wing"
	CodeWakeupEmpty       = "wakeup_empty"
	CodeWakeupUnknownWing = "wakeup_unknown_wing"
	CodeModelMismatch     = "model_mismatch"
	CodeOtherModel        = "other_model"
	CodeReadOnly          = "read_only"
	CodeShuttingDown      = "shutting_down"
	CodeBadRequest        = "bad_request"
	CodeRememberBad       = "remember_bad_request"
	CodeSecret            = "secret"
	CodeNoHive            = "no_hive"
	CodeOutsideHive       = "outside_hive"
	CodeOutsideAgentDir   = "outside_agent_dir"
	CodeNotMarked         = "not_marked"
	CodeConflict          = "conflict"
	CodeHashMismatch      = "hash_mismatch"
	CodeBusy              = "busy"
	CodeNotMined          = "not_mined"
	CodeOtherHive         = "other_hive"
	CodeNeedsWing         = "needs_wing"
	CodeAgentNeedsWing    = "agent_needs_wing"
	CodeBadWingID         = "bad_wing_id"
	CodeAgentExists       = "agent_exists"
	CodeNoCopy            = "no_copy"
	CodeBadRef            = "bad_ref"
	CodeAmbiguousRef      = "ambiguous_ref"
	CodeNoNote            = "no_note"
	CodeNoInboxItem       = "no_inbox_item"
	CodeInboxDecided      = "inbox_decided"
	CodeBadDecision       = "bad_decision"
	CodeInboxSecret       = "inbox_secret"
	CodeUnknownDomain     = "unknown_domain"
	CodeOutsideDomain     = "outside_domain"
	CodeInternal          = "internal"
)

// codeErrors is ordered: Code picks the first sentinel err matches.
var codeErrors = []struct {
	code string
	err  error
}{
	{CodeEmpty, palace.ErrEmpty},
	{CodeUnknownWing, palace.ErrUnknownWing},
	{CodeWakeupEmpty, wakeup.ErrEmpty},
	{CodeWakeupUnknownWing, wakeup.ErrUnknownWing},
	{CodeModelMismatch, palace.ErrModelMismatch},
	{CodeOtherModel, api.ErrOtherModel},
	{CodeReadOnly, palace.ErrReadOnly},
	{CodeShuttingDown, api.ErrNotRunning},
	{CodeRememberBad, remember.ErrBadRequest},
	{CodeSecret, remember.ErrSecret},
	{CodeNoHive, remember.ErrNoHive},
	{CodeOutsideHive, remember.ErrOutsideHive},
	{CodeOutsideAgentDir, remember.ErrOutsideAgentDir},
	{CodeConflict, remember.ErrConflict},
	{CodeHashMismatch, remember.ErrHashMismatch},
	{CodeBusy, remember.ErrBusy},
	{CodeNotMined, remember.ErrNotMined},
	{CodeNotMarked, remember.ErrNotMarked},
	{CodeOtherHive, api.ErrOtherHive},
	{CodeNeedsWing, mine.ErrNeedsWing},
	{CodeAgentNeedsWing, mine.ErrAgentNeedsWing},
	{CodeBadWingID, hive.ErrBadWingID},
	{CodeAgentExists, mine.ErrAgentExists},
	{CodeNoCopy, conflicts.ErrNoCopy},
	{CodeBadRef, api.ErrBadRef},
	{CodeAmbiguousRef, api.ErrAmbiguousRef},
	{CodeNoNote, api.ErrNoNote},
	{CodeNoInboxItem, inbox.ErrNoItem},
	{CodeInboxDecided, inbox.ErrDecided},
	{CodeBadDecision, inbox.ErrBadDecision},
	{CodeInboxSecret, inbox.ErrSecret},
	{CodeUnknownDomain, palace.ErrUnknownDomain},
	{CodeOutsideDomain, palace.ErrOutsideDomain},
}

// ErrorBody is the JSON of a failed request. ModelMismatch, null for
// other errors, names the wings of a model_mismatch, so a client tells the
// user what a search in its own process would; OtherModel, null for other
// errors, names the daemon's model in an other_model refusal;
// SupersedesRef, null for other errors, is remember's refused reference,
// which the CLI words with its flag's name.
type ErrorBody struct {
	Error         string                     `json:"error"`
	Code          string                     `json:"code"`
	ModelMismatch *palace.ModelMismatchError `json:"model_mismatch"`
	OtherModel    *api.OtherModelError       `json:"other_model"`
	OtherHive     *api.OtherHiveError        `json:"other_hive"`
	SupersedesRef *remember.RefError         `json:"supersedes_ref"`
}

// NewErrorBody is err as the daemon answers it.
func NewErrorBody(err error) ErrorBody {
	eb := ErrorBody{Error: err.Error(), Code: Code(err)}
	var mm *palace.ModelMismatchError
	if errors.As(err, &mm) {
		eb.ModelMismatch = mm
	}
	var om *api.OtherModelError
	if errors.As(err, &om) {
		eb.OtherModel = om
	}
	var oh *api.OtherHiveError
	if errors.As(err, &oh) {
		eb.OtherHive = oh
	}
	var ref *remember.RefError
	if errors.As(err, &ref) {
		eb.SupersedesRef = ref
	}
	return eb
}

// detail is the typed error eb sends the details of, as NewErrorBody set
// it, or nil.
func (eb ErrorBody) detail() error {
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
// (palace.ErrEmpty, palace.ErrUnknownWing, api.ErrOtherModel, …), and
// errors.As finds the typed error the daemon sent the details of (a
// *palace.ModelMismatchError, an *api.OtherModelError, an *api.OtherHiveError or a
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

// Code classifies err for the wire: the code of the first sentinel it
// matches, CodeInternal when none.
func Code(err error) string {
	for _, c := range codeErrors {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return CodeInternal
}

// MineErrorReply is the answer to a failed mine: what was done, and the error.
type MineErrorReply struct {
	api.MineReply
	Error string `json:"error"`
	Code  string `json:"code"`
}

// WorkingEvery is how often Working tells the client the daemon is at
// work on its request; well inside DefaultAnswerTimeout.
var WorkingEvery = time.Second

// Working runs f, the work of a read whose time grows with the hive (the
// index of thousands of wings), and while it runs sends the client a
// 102 Processing at once and every WorkingEvery. The client takes each as
// the daemon answering: it waits another answer bound instead of giving up
// and doing the same work itself. A stopped daemon sends none, and is
// given up on as before. f's answer is the handler's to write once Working
// returns.
func Working(w http.ResponseWriter, f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	t := time.NewTicker(WorkingEvery)
	defer t.Stop()
	for {
		w.WriteHeader(http.StatusProcessing)
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}
