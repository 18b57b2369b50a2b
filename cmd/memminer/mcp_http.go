package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/internal/bearer"
)

// httpOptions guard `mcp --http` (docs/mcp.md#http, docs/security.md).
type httpOptions struct {
	// token is what every request must carry as "Authorization: Bearer";
	// empty only with noAuth.
	token  string
	noAuth bool
	// origins are the browser Origins allowed; a request with any other
	// Origin header is refused. Clients that are no browser send none.
	origins []string
	// idle closes a session no request came for this long.
	idle time.Duration
	// maxSessions bounds the sessions open at once; a new one beyond it
	// is refused until one ends or expires.
	maxSessions int
}

func defaultHTTPOptions() httpOptions {
	return httpOptions{idle: 30 * time.Minute, maxSessions: 32}
}

func httpFlags(f *pflag.FlagSet, o *httpOptions) {
	f.StringArrayVar(&o.origins, "allow-origin", nil, "with --http, a browser Origin allowed to call, e.g. http://localhost:6274 (repeatable; default none)")
	f.DurationVar(&o.idle, "session-idle", o.idle, "with --http, close a session idle this long")
	f.IntVar(&o.maxSessions, "max-sessions", o.maxSessions, "with --http, the most sessions open at once")
	f.BoolVar(&o.noAuth, "no-auth", false, "with --http, serve without the bearer token: any local user may then read and write memory")
}

// tokenFile is the bearer token's file: in memminer's config directory.
func (a *app) tokenFile() string { return filepath.Join(config.Dir(a.getenv), bearer.FileName) }

// prepareHTTP checks o and loads (or makes) the token it needs.
func (a *app) prepareHTTP(o *httpOptions) error {
	if o.idle <= 0 {
		return usagef("--session-idle must be positive, got %s", o.idle)
	}
	if o.maxSessions < 1 {
		return usagef("--max-sessions must be at least 1, got %d", o.maxSessions)
	}
	for i, origin := range o.origins {
		if !strings.Contains(origin, "://") {
			return usagef("--allow-origin %q: want scheme://host[:port], e.g. http://localhost:6274", origin)
		}
		o.origins[i] = strings.TrimSuffix(origin, "/")
	}
	if o.noAuth {
		fmt.Fprintln(a.stderr, "memminer: warning: --no-auth: every local user can read and write this hive's memory over HTTP")
		return nil
	}
	token, err := a.token()
	o.token = token
	return err
}

// token loads the HTTP bearer token, making it on first use and saying so.
func (a *app) token() (string, error) {
	token, created, err := bearer.Load(a.tokenFile())
	if err == nil && created {
		fmt.Fprintf(a.stderr, "memminer: made a bearer token for HTTP clients in %s\n", a.tokenFile())
	}
	return token, err
}

func (a *app) mcpTokenCmd() *cobra.Command {
	var path bool
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Print the bearer token HTTP clients of mcp --http must send",
		Long: `Print the bearer token that clients of memminer mcp --http (and of the
daemon's metrics, when they are served on HTTP) send as
"Authorization: Bearer TOKEN". It is made on first use: 256 random bits in
$XDG_CONFIG_HOME/memminer/http-token, mode 0600; a token file other users
may read is refused. Remove the file to have a new token made.

Client set-up with the header: docs/mcp.md.`,
		Example: `  memminer mcp token
  claude mcp add --transport http memminer http://127.0.0.1:8765/mcp \\
    --header "Authorization: Bearer $(memminer mcp token)"
  export MEMMINER_TOKEN=$(memminer mcp token)
  codex mcp add memminer --url http://127.0.0.1:8765/mcp \\
    --bearer-token-env-var MEMMINER_TOKEN`,
		Args: exactArgs(0, "mcp token takes no arguments"),
		RunE: func(*cobra.Command, []string) error {
			if path {
				_, err := fmt.Fprintln(a.stdout, a.tokenFile())
				return err
			}
			token, err := a.token()
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(a.stdout, token)
			return err
		},
	}
	cmd.Flags().BoolVar(&path, "path", false, "print the token file's path instead")
	return cmd
}

// httpHandler serves MCP's streamable HTTP transport at /mcp, guarded by
// o: a browser Origin not allowed is refused (403), then a request
// without the token (401), then a new session beyond the cap (503).
func (s *mcpServer) httpHandler(o httpOptions) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv },
		&mcp.StreamableHTTPOptions{Logger: s.a.log, SessionTimeout: o.idle})
	var next http.Handler = http.MaxBytesHandler(s.answerIDOnly(s.capSessions(o.maxSessions, h)), maxMCPMessageBytes)
	if !o.noAuth {
		next = bearer.Require(o.token, next)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", checkOrigin(o.origins, next))
	return mux
}

// checkOrigin refuses a request whose Origin header is not one of
// allowed: a web page the user visits must not reach the server (DNS
// rebinding is refused by the SDK, by the Host header).
func checkOrigin(allowed []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, allowed) {
			http.Error(w, fmt.Sprintf("memminer: Origin %q is not allowed (mcp --allow-origin)", origin), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func originAllowed(origin string, allowed []string) bool {
	for _, a := range allowed {
		if strings.EqualFold(origin, a) {
			return true
		}
	}
	return false
}

// capSessions refuses a request that would open a session (one without
// Mcp-Session-Id) while max sessions are open.
func (s *mcpServer) capSessions(max int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && s.httpSessions() >= max {
			w.Header().Set("Retry-After", "60")
			http.Error(w, fmt.Sprintf("memminer: %d MCP sessions are open, the most --max-sessions allows; end one (DELETE) or wait until an idle one expires", max), http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// httpSessions counts the open HTTP sessions (stdio's has no id).
func (s *mcpServer) httpSessions() int {
	n := 0
	for ss := range s.srv.Sessions() {
		if ss.ID() != "" {
			n++
		}
	}
	return n
}

// answerIDOnly answers a POSTed message that has an id but neither a
// method nor a result or error with a JSON-RPC error, as stdio does; the
// SDK would take it for a response and answer nothing.
func (s *mcpServer) answerIDOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "memminer: "+err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		if id, bad := idOnly(body); bad {
			s.a.log.Warn("mcp: refused a message", "error", errIDOnly)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(refusal(id, jsonrpc.CodeInvalidRequest, errIDOnly))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// serveHTTPAndStdio serves MCP over streamable HTTP on ln until ctx is
// cancelled, and one session over stdio while in stays open.
func (s *mcpServer) serveHTTPAndStdio(ctx context.Context, ln net.Listener, o httpOptions, in io.ReadCloser, out io.Writer) error {
	hs := &http.Server{Handler: s.httpHandler(o), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(s.a.stderr, "memminer: serving MCP over streamable HTTP at http://%s/mcp\n", ln.Addr())
	if !o.noAuth {
		fmt.Fprintln(s.a.stderr, "memminer: clients send Authorization: Bearer TOKEN; memminer mcp token prints it")
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	stdio := make(chan error, 1)
	go func() { stdio <- s.serveStdio(ctx, in, out) }()
	var err error
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	stop()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(shutdown)
	<-stdio
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("mcp http: %w", err)
	}
	return nil
}
