package daemon

import (
	"context"
	"path/filepath"
	"sort"
	"sync"

	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
)

// Triggers name what caused a mine; they appear in status and metrics.
const (
	triggerStart    = "start"
	triggerTick     = "tick"
	triggerWatch    = "watch"
	triggerOverflow = "overflow"
	triggerRequest  = "request"
)

// queue is the mine goroutine's to-do list. Agents and wings are
// deduplicated: an agent queued twice is mined once. Requests from the
// socket go first (someone waits for them), then a pending scan, then
// agents in order, then wings to re-embed.
type queue struct {
	mu       sync.Mutex
	agents   map[string]string // agent directory → trigger
	order    []string
	wings    map[string]string // wing to re-embed → trigger
	wingList []string
	requests []*mineJob
	calls    []*callJob
	scan     string // trigger of a pending scan, "" when none
	closed   bool   // set by drain: no more requests are taken
	current  string // what the worker took last and has not finished
	wake     chan struct{}
}

func newQueue() *queue {
	return &queue{agents: map[string]string{}, wings: map[string]string{}, wake: make(chan struct{}, 1)}
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// addAgent queues a mine of the agent directory dir.
func (q *queue) addAgent(dir, trigger string) {
	q.mu.Lock()
	if _, ok := q.agents[dir]; !ok {
		q.agents[dir] = trigger
		q.order = append(q.order, dir)
	}
	q.mu.Unlock()
	q.signal()
}

// addReembed queues a re-embedding of wing, one that no agent directory of
// the hive mines.
func (q *queue) addReembed(wing, trigger string) {
	q.mu.Lock()
	if _, ok := q.wings[wing]; !ok {
		q.wings[wing] = trigger
		q.wingList = append(q.wingList, wing)
	}
	q.mu.Unlock()
	q.signal()
}

// requestScan queues a scan of the whole hive.
func (q *queue) requestScan(trigger string) {
	q.mu.Lock()
	// A tick's scan also advances retry backoffs; keep that meaning if one
	// is already pending.
	if q.scan == "" || trigger == triggerTick {
		q.scan = trigger
	}
	q.mu.Unlock()
	q.signal()
}

// addRequest queues a mine handed over through the socket. It returns
// false once the daemon is stopping.
func (q *queue) addRequest(j *mineJob) bool {
	return q.addOpen(func() { q.requests = append(q.requests, j) })
}

// addOpen runs put under the queue's lock unless the daemon is stopping.
func (q *queue) addOpen(put func()) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	put()
	q.mu.Unlock()
	q.signal()
	return true
}

// addCall queues a palace change other than a mine, run by the mine
// goroutine so it never races one. It returns false once the daemon is
// stopping.
func (q *queue) addCall(j *callJob) bool {
	return q.addOpen(func() { q.calls = append(q.calls, j) })
}

// work is one item taken from the queue: exactly one of request, call,
// scan, agent and reembed is set.
type work struct {
	request *mineJob
	call    *callJob
	scan    string
	agent   string
	reembed string // a wing
	trigger string
}

func (q *queue) next() (work, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case len(q.requests) > 0:
		j := q.requests[0]
		q.requests = q.requests[1:]
		q.current = "mining " + j.req.Path + " for memminer mine"
		return work{request: j, trigger: triggerRequest}, true
	case len(q.calls) > 0:
		j := q.calls[0]
		q.calls = q.calls[1:]
		q.current = j.what
		return work{call: j, trigger: triggerRequest}, true
	case q.scan != "":
		t := q.scan
		q.scan = ""
		q.current = "scanning the hive"
		return work{scan: t, trigger: t}, true
	case len(q.order) > 0:
		dir := q.order[0]
		q.order = q.order[1:]
		t := q.agents[dir]
		delete(q.agents, dir)
		q.current = "mining " + dir
		if w, err := palace.NormalizeWingID(filepath.Base(dir)); err == nil {
			q.current = "mining wing " + w
		}
		return work{agent: dir, trigger: t}, true
	case len(q.wingList) > 0:
		wing := q.wingList[0]
		q.wingList = q.wingList[1:]
		t := q.wings[wing]
		delete(q.wings, wing)
		q.current = "re-embedding wing " + wing
		return work{reembed: wing, trigger: t}, true
	}
	return work{}, false
}

// done marks the work taken by next as finished.
func (q *queue) done() {
	q.mu.Lock()
	q.current = ""
	q.mu.Unlock()
}

// pending lists queued agent directories (sorted), queued requests, and
// what the worker is doing.
func (q *queue) pending() ([]string, int, string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	dirs := make([]string, 0, len(q.order))
	dirs = append(dirs, q.order...)
	sort.Strings(dirs)
	return dirs, len(q.requests) + len(q.calls), q.current
}

// pendingReembeds lists the queued wings to re-embed, sorted.
func (q *queue) pendingReembeds() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	wings := make([]string, 0, len(q.wingList))
	wings = append(wings, q.wingList...)
	sort.Strings(wings)
	return wings
}

// drain fails every queued request and refuses new ones, for shutdown.
func (q *queue) drain(err error) {
	q.mu.Lock()
	reqs, calls := q.requests, q.calls
	q.requests, q.calls = nil, nil
	q.closed = true
	q.mu.Unlock()
	for _, j := range reqs {
		j.reply <- mineOutcome{err: err}
	}
	for _, j := range calls {
		j.done <- err
	}
}

// callJob is a palace change handed over through the socket: run is
// called on the mine goroutine, and its error sent on done.
type callJob struct {
	what string // shown as the daemon's current work in status
	run  func(ctx context.Context) error
	done chan error // buffered, capacity 1
}

// mineJob is a mine handed over through the socket, with the channel its
// handler waits on.
type mineJob struct {
	ctx   context.Context
	req   api.MineRequest
	reply chan mineOutcome // buffered, capacity 1
}

type mineOutcome struct {
	reply api.MineReply
	err   error
}
