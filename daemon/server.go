package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
	"github.com/memminer/memminer/service/inproc"
)

// maxRequestBody bounds a request's JSON.
const maxRequestBody = 1 << 20

// requestReadTimeout bounds reading a request, headers and body: a client
// that never finishes its body must not hold a connection (and a handler)
// for good. Requests are a few hundred bytes; a variable for tests.
var requestReadTimeout = 10 * time.Second

// routes is the control socket's API. Every answer is JSON; failures are
// {"error": message, "code": code}.
//
//	GET  /status        api.Status
//	POST /search        api.SearchRequest → api.SearchResult
//	POST /mine          api.MineRequest → api.MineReply
//	GET  /wakeup        ?tokens=N&wing=ID&include_inbox=1&notice=… → wakeup.Digest
//	POST /remember      api.RememberRequest → api.RememberReply
//	GET  /index         catalog.Index
//	POST /show          api.ShowRequest → api.ShownNote
//	GET  /inbox         ?wing=ID&all=1 → []inbox.Item
//	POST /inbox/decide  api.DecideRequest → api.DecideReply
//	GET  /progress      api.Progress
//	POST /forget        api.ForgetRequest → mine.Forgotten
//	GET  /metrics       the Prometheus text exposition (as on MetricsAddr)
//	GET  /debug/pprof/heap, /debug/pprof/goroutine   runtime profiles
//
// Components add their own routes (see Router).
func (d *Daemon) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, d.Status(r.Context()))
	})
	mux.HandleFunc("GET /progress", func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		p := api.Progress{FirstMine: d.firstMineProgress(time.Now()), Request: d.request}
		d.mu.Unlock()
		WriteJSON(w, http.StatusOK, p)
	})
	mux.HandleFunc("POST /search", d.handleSearch)
	mux.HandleFunc("POST /mine", d.handleMine)
	mux.HandleFunc("GET /wakeup", d.handleWakeup)
	mux.HandleFunc("POST /forget", d.handleForget)
	mux.HandleFunc("POST /remember", d.handleRemember)
	mux.HandleFunc("GET /index", d.handleIndex)
	mux.HandleFunc("POST /show", d.handleShow)
	mux.HandleFunc("GET /inbox", d.handleInbox)
	mux.HandleFunc("POST /inbox/decide", d.handleDecide)
	// The socket is in the palace directory (0700): metrics here are the
	// user's alone, wing names included (docs/security.md).
	mux.HandleFunc("GET /metrics", d.metrics.serve)
	// Heap and goroutine profiles, to find what grows in a long run
	// (bench/daemon -soak); the socket is the user's alone.
	mux.HandleFunc("GET /debug/pprof/heap", serveProfile("heap"))
	mux.HandleFunc("GET /debug/pprof/goroutine", serveProfile("goroutine"))
	for _, c := range d.opts.Components {
		if r, ok := c.(Router); ok {
			r.Routes(mux)
		}
	}
	return mux
}

// serveProfile serves the runtime profile name as net/http/pprof does,
// with its debug and gc parameters; a delta over seconds is refused (take
// two profiles and compare them with go tool pprof -diff_base).
// net/http/pprof itself would add its registration on
// http.DefaultServeMux to the start of every command.
func serveProfile(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("seconds") != "" {
			WriteError(w, http.StatusBadRequest, daemonclient.CodeBadRequest, "profile "+name+": seconds is not supported; take two profiles and compare them with go tool pprof -diff_base")
			return
		}
		debug, _ := strconv.Atoi(r.FormValue("debug"))
		if gc, _ := strconv.Atoi(r.FormValue("gc")); gc > 0 && name == "heap" {
			runtime.GC()
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if debug == 0 {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
		} else {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		_ = pprof.Lookup(name).WriteTo(w, debug)
	}
}

func (d *Daemon) handleSearch(w http.ResponseWriter, r *http.Request) {
	var req api.SearchRequest
	if !readJSON(w, r, &req) {
		return
	}
	if !d.sameModel(w, req.Model) {
		return
	}
	query := strings.TrimSpace(req.Query)
	if query == "" {
		WriteError(w, http.StatusBadRequest, daemonclient.CodeBadRequest, "search needs a QUERY")
		return
	}
	req.Query = query
	start := time.Now()
	out, err := d.local().Search(r.Context(), req)
	if errors.Is(err, api.ErrBadRequest) {
		WriteError(w, http.StatusBadRequest, daemonclient.CodeBadRequest, "search: "+err.Error())
		return
	}
	d.metrics.observeSearch(time.Since(start))
	if err != nil {
		WriteErr(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, out)
}

func (d *Daemon) handleMine(w http.ResponseWriter, r *http.Request) {
	var req api.MineRequest
	if !readJSON(w, r, &req) {
		return
	}
	if !d.sameModel(w, req.Model) {
		return
	}
	if !filepath.IsAbs(req.Path) {
		WriteError(w, http.StatusBadRequest, daemonclient.CodeBadRequest, fmt.Sprintf("mine: path %q is not absolute", req.Path))
		return
	}
	if req.Wing != "" {
		// Checked before queueing, so a bad id is the caller's 400
		// whatever else the mine would have found first.
		if _, err := palace.NormalizeWingID(req.Wing); err != nil {
			WriteErr(w, fmt.Errorf("mine: %w", err))
			return
		}
	}
	if !d.servesHiveOf(w, req) {
		return
	}
	j := &mineJob{ctx: r.Context(), req: req, reply: make(chan mineOutcome, 1)}
	if !d.q.addRequest(j) {
		WriteErr(w, fmt.Errorf("%w: the daemon is shutting down", api.ErrNotRunning))
		return
	}
	var out mineOutcome
	select {
	case out = <-j.reply:
	case <-r.Context().Done():
		// The caller left; the job sees its context and does not run, or
		// stops at the next file.
		return
	}
	if out.err != nil {
		// The summary goes along: the caller reports what was done and
		// which files were skipped before the error.
		WriteJSON(w, statusOf(out.err), daemonclient.MineErrorReply{MineReply: out.reply, Error: out.err.Error(), Code: daemonclient.Code(out.err)})
		return
	}
	WriteJSON(w, http.StatusOK, out.reply)
}

func (d *Daemon) handleWakeup(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	opts := wakeup.Options{Wing: q.Get("wing"), ReadFile: wakeup.ReadFileLimited, IncludeInbox: q.Get("include_inbox") == "1", Notices: q["notice"]}
	if t := q.Get("tokens"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 {
			WriteError(w, http.StatusBadRequest, daemonclient.CodeBadRequest, fmt.Sprintf("tokens: %q is not a whole number", t))
			return
		}
		opts.Tokens = n
	}
	if t := q.Get("stale_after"); t != "" {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil || (n < 0 && time.Duration(n) != govern.Never) {
			WriteError(w, http.StatusBadRequest, daemonclient.CodeBadRequest, fmt.Sprintf("stale_after: %q is not a duration in nanoseconds", t))
			return
		}
		opts.StaleAfter = time.Duration(n)
	}
	if t := q.Get("scope"); t != "" {
		if err := json.Unmarshal([]byte(t), &opts.Scope); err != nil {
			WriteError(w, http.StatusBadRequest, daemonclient.CodeBadRequest, fmt.Sprintf("scope: %v", err))
			return
		}
	}
	dg, err := d.local().WakeUp(r.Context(), opts)
	if err != nil {
		WriteErr(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, dg)
}

// sameModel refuses a caller configured with another model than the
// daemon's, so it can fall back to opening the palace itself. A caller that
// names no model takes the daemon's.
func (d *Daemon) sameModel(w http.ResponseWriter, spec string) bool {
	if spec == "" || spec == d.opts.ModelSpec {
		return true
	}
	WriteErr(w, &api.OtherModelError{PID: os.Getpid(), Daemon: d.opts.ModelSpec, Caller: spec})
	return false
}

// servesHiveOf answers false, with the refusal, when req mines agent
// directories of another hive than the daemon's into wings its own hive's
// agents mine: the daemon's next scan would mine its own places back over
// them (docs/mining.md, "What is mined"). The daemon's own agents are
// listed only when the mine takes wings over from another hive, and each
// hive is compared with the daemon's once.
func (d *Daemon) servesHiveOf(w http.ResponseWriter, req api.MineRequest) bool {
	if d.opts.Hive == "" {
		return true
	}
	var own map[string]bool
	ours := map[string]bool{}
	for _, hw := range mine.HiveWings(req.Path, mine.Options{Wing: req.Wing, Agents: req.Agents, Hive: d.opts.Hive}) {
		same, seen := ours[hw.Hive]
		if !seen {
			same = sameResolvedPath(hw.Hive, d.opts.Hive)
			ours[hw.Hive] = same
		}
		if same {
			continue
		}
		if own == nil {
			own = map[string]bool{}
			for _, a := range d.listAgents().agents {
				own[a.wing] = true
			}
		}
		if !own[hw.Wing] {
			continue
		}
		d.log.Warn("mine request of another hive refused", "path", req.Path, "hive", hw.Hive, "wing", hw.Wing, "serves", d.opts.Hive)
		WriteErr(w, &api.OtherHiveError{PID: os.Getpid(), Hive: d.opts.Hive, Path: req.Path})
		return false
	}
	return true
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxRequestBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		WriteError(w, http.StatusBadRequest, daemonclient.CodeBadRequest, "bad request: "+err.Error())
		return false
	}
	return true
}

// WriteJSON answers a request with v, as every route of the socket
// (the daemon's own and its components', see Router) answers.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// WriteError answers a request with the error body every route uses:
// msg, and code for the client to tell it apart.
func WriteError(w http.ResponseWriter, status int, code, msg string) {
	WriteJSON(w, status, daemonclient.ErrorBody{Error: msg, Code: code})
}

// WriteErr answers a request with err, its HTTP status and wire code
// picked from the error (an unknown wing is 404 unknown_wing, …).
func WriteErr(w http.ResponseWriter, err error) {
	WriteJSON(w, statusOf(err), daemonclient.NewErrorBody(err))
}

// statusOf picks the HTTP status for an error.
func statusOf(err error) int {
	switch daemonclient.Code(err) {
	case daemonclient.CodeUnknownWing, daemonclient.CodeWakeupUnknownWing, daemonclient.CodeNoCopy, daemonclient.CodeNoNote, daemonclient.CodeNoInboxItem:
		return http.StatusNotFound
	case daemonclient.CodeRememberBad, daemonclient.CodeNoHive, daemonclient.CodeBadRef, daemonclient.CodeAmbiguousRef, daemonclient.CodeBadDecision:
		return http.StatusBadRequest
	case daemonclient.CodeConflict, daemonclient.CodeHashMismatch, daemonclient.CodeOtherHive, daemonclient.CodeBusy, daemonclient.CodeInboxDecided:
		return http.StatusConflict
	case daemonclient.CodeEmpty, daemonclient.CodeWakeupEmpty, daemonclient.CodeModelMismatch, daemonclient.CodeOtherModel, daemonclient.CodeReadOnly, daemonclient.CodeAgentExists:
		return http.StatusConflict
	case daemonclient.CodeShuttingDown:
		return http.StatusServiceUnavailable
	case daemonclient.CodeNeedsWing, daemonclient.CodeAgentNeedsWing, daemonclient.CodeBadWingID:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// local is the service on the daemon's palace that its handlers answer
// with: the same code the CLI runs without a daemon.
func (d *Daemon) local() *inproc.Service {
	return inproc.New(inproc.Options{
		Palace:      d.p,
		Dir:         d.p.Dir(),
		Logger:      d.log,
		Warn:        func(msg string) { d.log.Warn(msg) },
		Hive:        d.opts.Hive,
		Agents:      d.opts.Agents,
		Domains:     d.opts.Domains,
		ModelSpec:   d.opts.ModelSpec,
		Enabled:     true,
		Embedder:    func(context.Context) (embed.Embedder, error) { return d.opts.Embedder, nil },
		MineOptions: func() mine.Options { return d.mineOptions(nil) },
		Isolation: func(ctx context.Context) *wakeup.Isolation {
			return WakeupIsolation(HiveReplication(ctx, d.opts.Syncthing, d.opts.Hive))
		},
	})
}
