package daemon

import (
	"github.com/memminer/memminer/api"
	"github.com/memminer/memminer/socket"
)

// The requests, results and errors of the control socket are package api's;
// these names are kept so code written against the daemon's still builds.
// New code uses package api.

type (
	// SearchRequest is api.SearchRequest.
	SearchRequest = api.SearchRequest
	// SearchResult is api.SearchResult.
	SearchResult = api.SearchResult
	// Explanation is api.Explanation.
	Explanation = api.Explanation
	// Hit is api.Hit.
	Hit = api.Hit
	// MineRequest is api.MineRequest.
	MineRequest = api.MineRequest
	// MineResult is api.MineResult.
	MineResult = api.MineResult
	// Reembed is api.Reembed.
	Reembed = api.Reembed
	// MineReply is api.MineReply.
	MineReply = api.MineReply
	// Status is api.Status.
	Status = api.Status
	// WingStatus is api.WingStatus.
	WingStatus = api.WingStatus
	// WingMine is api.WingMine.
	WingMine = api.WingMine
	// DaemonInfo is api.DaemonInfo.
	DaemonInfo = api.DaemonInfo
	// Pending is api.Pending.
	Pending = api.Pending
	// FileError is api.FileError.
	FileError = api.FileError
	// OtherModelError is api.OtherModelError.
	OtherModelError = api.OtherModelError
	// OtherHiveError is api.OtherHiveError.
	OtherHiveError = api.OtherHiveError
	// NoAnswerError is api.NoAnswerError.
	NoAnswerError = api.NoAnswerError
	// ForgetRequest is api.ForgetRequest.
	ForgetRequest = api.ForgetRequest
	// RememberRequest is api.RememberRequest.
	RememberRequest = api.RememberRequest
	// RememberReply is api.RememberReply.
	RememberReply = api.RememberReply
	// Replication is api.Replication.
	Replication = api.Replication
	// ReplicaDevice is api.ReplicaDevice.
	ReplicaDevice = api.ReplicaDevice
	// MineProgress is api.MineProgress.
	MineProgress = api.MineProgress
	// Progress is api.Progress.
	Progress = api.Progress
)

var (
	// ErrNotRunning is api.ErrNotRunning.
	ErrNotRunning = api.ErrNotRunning
	// ErrNoAnswer is api.ErrNoAnswer.
	ErrNoAnswer = api.ErrNoAnswer
	// ErrOtherModel is api.ErrOtherModel.
	ErrOtherModel = api.ErrOtherModel
	// ErrOtherHive is api.ErrOtherHive.
	ErrOtherHive = api.ErrOtherHive
	// ErrConnectionLost is api.ErrConnectionLost.
	ErrConnectionLost = api.ErrConnectionLost
)

var (
	// NewMineResult is api.NewMineResult.
	NewMineResult = api.NewMineResult
	// NewSearchResult is api.NewSearchResult.
	NewSearchResult = api.NewSearchResult
	// CheckMinRelevance is api.CheckMinRelevance.
	CheckMinRelevance = api.CheckMinRelevance
	// ReplicationOff is api.ReplicationOff.
	ReplicationOff = api.ReplicationOff
)

// The socket client is package socket's; these names are kept so code
// written against the daemon's still builds.
type (
	// Client is socket.Client.
	Client = socket.Client
	// ClientOption is socket.ClientOption.
	ClientOption = socket.ClientOption
	// RemoteError is socket.RemoteError.
	RemoteError = socket.RemoteError
)

// DefaultAnswerTimeout is socket.DefaultAnswerTimeout.
const DefaultAnswerTimeout = socket.DefaultAnswerTimeout

var (
	// NewClient is socket.NewClient.
	NewClient = socket.NewClient
	// WithAnswerTimeout is socket.WithAnswerTimeout.
	WithAnswerTimeout = socket.WithAnswerTimeout
	// WithNoAnswer is socket.WithNoAnswer.
	WithNoAnswer = socket.WithNoAnswer
)
