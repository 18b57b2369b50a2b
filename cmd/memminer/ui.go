package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/internal/bearer"
	"github.com/memminer/memminer/internal/listenaddr"
)

// uiFiles are the page's templates, stylesheet and script, in the binary:
// the page asks no other host for anything.
//
//go:embed ui
var uiFiles embed.FS

// uiCookie is the cookie a browser holds the token in once it opened the
// printed URL.
const uiCookie = "memminer_ui"

// uiCSP allows the page its own stylesheet and script and nothing else:
// no inline script, no other host, no frame.
const uiCSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// uiTokenHeader carries the token on a state-changing request, beside
// "Authorization: Bearer": a cookie alone, which a forged request from
// another site would carry too, changes nothing.
const uiTokenHeader = "X-Memminer-Token"

func (a *app) uiCmd() *cobra.Command {
	var (
		listen string
		open   bool
	)
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the page where a person reviews the inbox and conflicts",
		Long: `Serve a page on this machine's loopback for the person in the loop: the
overview (wings, the daemon and Syncthing, open conflicts, the inbox, packs
needing review, open handoffs), the inbox with approve and reject, one item
or several at once, the open conflicts with each copy's proposed merge,
applied from the page, the packs with their marks, a memory search with
each note's page (neighbours, governance, Git history), the activity:
notes per wing over time and the daemon's mines, searches and latencies,
and, read only, the hive's skills and the pre-action log.

The first line printed is the URL to open; it carries the login token
(the one memminer mcp token prints), which the page trades for a cookie.
Every request needs the token; a request that changes something needs it in
a header too, so another site cannot forge one. --listen takes a loopback
address only; port 0 picks a free port.

The page works through the same service as the commands: with a daemon
serving the palace it asks the daemon, without one it reads the palace
itself, with the same results. Approving, rejecting, merging, marking and
searching do what memminer inbox approve, inbox reject, conflicts merge
--apply, pack --mark and search do.

Details: docs/ui.md.`,
		Example: `  memminer ui
  memminer ui --listen 127.0.0.1:8766 --open`,
		Args: exactArgs(0, "ui takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			u, ln, err := a.listenUI("--listen", listen)
			if err != nil {
				return err
			}
			url := fmt.Sprintf("http://%s/?token=%s", ln.Addr(), u.token)
			fmt.Fprintln(a.stdout, url)
			if open {
				openBrowser(a, url)
			}
			return u.serve(cmd.Context(), ln)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:0", "loopback address to serve on, host:port (port 0: any free port)")
	f.BoolVar(&open, "open", false, "open the page in the desktop's browser")
	settingFlags(f, "hive")
	return cmd
}

// listenUI listens on addr (flag names it), a loopback address, and
// makes the page's server for it with the HTTP token.
func (a *app) listenUI(flag, addr string) (*uiServer, net.Listener, error) {
	if err := listenaddr.Check(flag, addr, "127.0.0.1:0", false); err != nil {
		return nil, nil, usagef("%v", err)
	}
	token, err := a.token()
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", flag, err)
	}
	u, err := a.newUI(token, ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	return u, ln, nil
}

// serveUIBeside serves the page for run --ui until ctx ends or the
// returned stop is called, which waits for it. The log names the address,
// never the token (logs are read by more than the token's owner).
func (a *app) serveUIBeside(ctx context.Context, log *slog.Logger) (stop func(), err error) {
	u, ln, err := a.listenUI("--ui-listen", a.runUI)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := u.serve(ctx, ln); err != nil {
			log.Error("the page stopped", "err", err)
		}
	}()
	log.Info("serving the page of memminer ui; open it with ?token= and the token memminer mcp token prints", "url", fmt.Sprintf("http://%s/", ln.Addr()))
	return func() { cancel(); <-done }, nil
}

// openBrowser asks the desktop to open url; failing, it says so and the
// printed URL stands.
func openBrowser(a *app, url string) {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	c := exec.Command(opener, url)
	if err := c.Start(); err != nil {
		fmt.Fprintf(a.stderr, "memminer: could not open a browser (%v); open the URL above\n", err)
		return
	}
	go c.Wait()
}

// uiServer serves the page for one app: its settings and its service.
type uiServer struct {
	a     *app
	token string
	// hosts are the Host headers accepted: the address served and
	// localhost on its port. Any other is a name that resolves here by
	// accident or by design (DNS rebinding), and is refused.
	hosts []string
	pages map[string]*template.Template
	// mu serves one request at a time: the app is a command's, with state
	// no two requests should share at once, and a person clicks.
	mu sync.Mutex
}

// newUI is the page's server for a (resolved), on addr, guarded by token.
func (a *app) newUI(token, addr string) (*uiServer, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	u := &uiServer{a: a, token: token, hosts: []string{addr, net.JoinHostPort("localhost", port)}}
	u.pages, err = parseUIPages()
	return u, err
}

// uiPageNames are the templates of ui/, each rendered in ui/layout.html.
var uiPageNames = []string{"overview", "inbox", "conflicts", "packs", "memory", "note", "activity", "skills", "preaction"}

func parseUIPages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range uiPageNames {
		t, err := template.New("layout.html").Funcs(uiFuncs).ParseFS(uiFiles, "ui/layout.html", "ui/"+name+".html")
		if err != nil {
			return nil, err
		}
		pages[name] = t
	}
	return pages, nil
}

// serve serves the page on ln until ctx ends.
func (u *uiServer) serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: u.handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var err error
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(shutdown)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("ui: %w", err)
	}
	return nil
}

// handler is every route behind the guard.
func (u *uiServer) handler() http.Handler {
	static, _ := fs.Sub(uiFiles, "ui/static")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", u.overview)
	mux.HandleFunc("GET /inbox", u.inboxPage)
	mux.HandleFunc("POST /inbox/decide", u.inboxDecide)
	mux.HandleFunc("GET /conflicts", u.conflictsPage)
	mux.HandleFunc("POST /conflicts/merge", u.conflictsMerge)
	mux.HandleFunc("GET /packs", u.packsPage)
	mux.HandleFunc("POST /packs/mark", u.packsMark)
	mux.HandleFunc("GET /memory", u.memoryPage)
	mux.HandleFunc("GET /memory/note", u.notePage)
	mux.HandleFunc("GET /activity", u.activity)
	mux.HandleFunc("GET /skills", u.skillsPage)
	mux.HandleFunc("GET /pre-action", u.preActionPage)
	// The page has no icon; an answer keeps the browser's ask quiet.
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	return u.guard(mux)
}

// guard sets the headers every answer has and refuses what the page does
// not serve: another Host, a request without the token, a state change
// without the token in a header or from another Origin.
func (u *uiServer) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", uiCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if !slices.Contains(u.hosts, r.Host) {
			http.Error(w, "memminer ui: wrong Host; open the URL memminer ui printed", http.StatusMisdirectedRequest)
			return
		}
		if r.Method == http.MethodGet && r.URL.Query().Has("token") {
			u.login(w, r)
			return
		}
		safe := r.Method == http.MethodGet || r.Method == http.MethodHead
		if !u.authorized(r, safe) {
			http.Error(w, "memminer ui: missing or wrong token; open the URL memminer ui printed", http.StatusUnauthorized)
			return
		}
		if origin := r.Header.Get("Origin"); !safe && origin != "" && origin != "http://"+r.Host {
			http.Error(w, "memminer ui: request from another origin refused", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		// A change's form is read here, once, for every handler.
		if err := r.ParseForm(); !safe && err != nil {
			http.Error(w, "memminer ui: "+err.Error(), http.StatusBadRequest)
			return
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		// In a daemon (run --ui) a page reading every note is work: the
		// collector must not rest meanwhile.
		defer daemon.Working()()
		next.ServeHTTP(w, r)
	})
}

// authorized reports whether r carries the token: in a header (Bearer,
// or the page's own), or for a request that changes nothing, in the
// cookie the login set.
func (u *uiServer) authorized(r *http.Request, safe bool) bool {
	if bearer.Authorized(r, u.token) || bearer.Equal(r.Header.Get(uiTokenHeader), u.token) {
		return true
	}
	if !safe {
		return false
	}
	c, err := r.Cookie(uiCookie)
	return err == nil && bearer.Equal(c.Value, u.token)
}

// login trades the URL's token for the cookie and sends the browser on
// to the same page without it, so the token leaves the address bar.
func (u *uiServer) login(w http.ResponseWriter, r *http.Request) {
	if !bearer.Equal(r.URL.Query().Get("token"), u.token) {
		http.Error(w, "memminer ui: wrong token; open the URL memminer ui printed", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: u.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	q := r.URL.Query()
	q.Del("token")
	target := r.URL.Path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// uiPage is what every page's layout shows.
type uiPage struct {
	Title string
	// Nav is the page's name, marked in the navigation.
	Nav string
	// Token is what the page's script sends in uiTokenHeader.
	Token string
	// Errors are what could not be read for the page.
	Errors []string
}

// render renders page name with data, or a 500 naming the failure.
func (u *uiServer) render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := u.pages[name].Execute(w, data); err != nil {
		u.a.log.Warn("ui: rendering the page failed", "page", name, "err", err)
	}
}

func (u *uiServer) page(title, nav string) uiPage {
	return uiPage{Title: title, Nav: nav, Token: u.token}
}
