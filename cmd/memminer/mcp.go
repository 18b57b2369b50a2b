package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/internal/listenaddr"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
)

// maxMCPMessageBytes bounds one inbound MCP message, on stdio and HTTP: a
// larger one is refused with a protocol error and the server goes on.
const maxMCPMessageBytes = 1 << 20

func (a *app) mcpCmd() *cobra.Command {
	var (
		wing        string
		httpAddr    string
		allowRemote bool
		httpOpts    = defaultHTTPOptions()
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the hive's memory to an agent over MCP",
		Long: `Serve MCP over stdin/stdout for one agent: the tools search, wake_up,
remember, handoff, pack, conflicts, read_note, propose_skill and status, and
read-only resources for each wing's memory files
(memminer://wing/<id>/<file>; inboxes left out), each Context Pack
rendered (memminer://pack/<name>) and the wake-up digest
(memminer://wake-up). Approving the inbox or a skill is a person's CLI
command, never a tool.

Each tool runs the code of the command of the same name and returns its text
output, with what its --json prints as structured content (for search and
wake_up a compact form: sources relative to the hive, no absolute paths, no
null or empty keys). When the daemon
(memminer run) serves the palace, the tools ask it and the server loads no
model or palace; otherwise each call reads the palace itself, read-only.

--wing (or MEMMINER_WING, or wing: in the config file) is the agent this
server speaks for: remember writes to its memory file and to no other, and
conflicts checks it unless told another wing; without it remember refuses.

stdout carries only MCP messages; warnings go to stderr. With --http the
server also answers MCP's streamable HTTP transport at http://ADDR/mcp, on a
loopback address unless --allow-remote; it then serves until it is stopped,
even after stdin ends. Every HTTP request must carry the bearer token
(Authorization: Bearer TOKEN; memminer mcp token prints it, making it on
first use), a browser Origin is refused unless --allow-origin names it, and
idle sessions expire (--session-idle) up to --max-sessions at once.

Client set-up (Claude Code, Codex, mcp.json): docs/mcp.md.`,
		Example: `  claude mcp add memminer -- memminer mcp --wing dwight
  memminer mcp --wing dwight --http 127.0.0.1:8765
  claude mcp add --transport http memminer http://127.0.0.1:8765/mcp \\
    --header "Authorization: Bearer $(memminer mcp token)"`,
		Args: exactArgs(0, "mcp takes no arguments; name the agent with --wing ID"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A server runs a whole session: it collects as usual.
			processGC.restore()
			if cmd.Flags().Changed("wing") {
				a.cfg.Wing = wing
			}
			w, err := normalizeWing(a.cfg.Wing)
			if err != nil {
				return err
			}
			srv := a.newMCPServer(w)
			ctx := cmd.Context()
			if httpAddr == "" {
				return srv.serveStdio(ctx, os.Stdin, os.Stdout)
			}
			if err := a.prepareHTTP(&httpOpts); err != nil {
				return err
			}
			ln, err := listenMCP(httpAddr, allowRemote)
			if err != nil {
				return err
			}
			return srv.serveHTTPAndStdio(ctx, ln, httpOpts, os.Stdin, os.Stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&wing, "wing", "", "the agent this server speaks for, the only wing remember writes (env MEMMINER_WING, config wing:)")
	settingFlags(f, "hive") // scanned for conflicts when no daemon runs
	f.StringVar(&httpAddr, "http", "", "also serve streamable HTTP on this loopback host:port, e.g. 127.0.0.1:8765")
	f.BoolVar(&allowRemote, "allow-remote", false, "allow an --http address other machines can reach")
	httpFlags(f, &httpOpts)
	cmd.AddCommand(a.mcpTokenCmd())
	return cmd
}

// mcpServer is memminer's MCP server: tools and resources over the app's
// configuration.
type mcpServer struct {
	a    *app
	wing string // the agent the server speaks for; may be empty
	srv  *mcp.Server
	// mu serialises calls into the app, whose commands' cores were written
	// for one call at a time (the model warning, the palace repairs).
	mu sync.Mutex
}

func (a *app) newMCPServer(wing string) *mcpServer {
	// The tools run for the agent the server speaks for: its domain
	// scopes search, wake-up and packs (domainScope).
	a.cfg.Wing = wing
	s := &mcpServer{a: a, wing: wing}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "memminer", Version: currentVersion().Version}, &mcp.ServerOptions{
		Logger:       a.log,
		Capabilities: &mcp.ServerCapabilities{},
	})
	s.addTools()
	s.addResources()
	return s
}

// toolInput is the input schema of a tool taking T, with the types of
// more added: a list is an array and a number a number, never also null
// (every byte of a schema is paid in every session's context).
func toolInput[T any](more map[reflect.Type]*jsonschema.Schema) *jsonschema.Schema {
	types := map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[[]string](): {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
		reflect.TypeFor[*float64](): {Type: "number"},
	}
	maps.Copy(types, more)
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: types})
	if err != nil {
		panic(err) // T is fixed at compile time; every MCP test builds it
	}
	return s
}

// objectSchema is the output schema of every tool: the full schemas of the
// CLI's JSON would cost agents far more context than the tools themselves.
var objectSchema = &jsonschema.Schema{Type: "object"}

func (s *mcpServer) addTools() {
	// idempotentHint means something only when readOnlyHint is false
	// (MCP's spec): a read-only tool's would be bytes paid for nothing.
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:         "search",
		Description:  "Search the hive's notes and skills; best first.",
		InputSchema:  searchToolSchema(),
		OutputSchema: objectSchema,
		Annotations:  readOnly,
	}, s.search)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:         "wake_up",
		Description:  "Session start: identities and the notes that matter now.",
		OutputSchema: objectSchema,
		Annotations:  readOnly,
	}, s.wakeUp)
	who := "this agent's"
	if s.wing != "" {
		who = "wing " + s.wing + "'s"
	}
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:         "remember",
		Description:  "Add a dated note to " + who + " memory; refused while it has a conflict copy.",
		InputSchema:  toolInput[rememberArgs](nil),
		OutputSchema: objectSchema,
	}, s.remember)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:         "handoff",
		Description:  "Hand work to a wing (to, summary) or accept one (accept).",
		OutputSchema: objectSchema,
	}, s.handoff)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:         "pack",
		Description:  "Render a Context Pack; mark it good, bad or reviewed.",
		OutputSchema: objectSchema,
	}, s.pack)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:         "conflicts",
		Description:  "Open Syncthing conflict copies; check: is the wing safe to write.",
		OutputSchema: objectSchema,
		Annotations:  readOnly,
	}, s.conflicts)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:         "read_note",
		Description:  "A note with its heading path, governance, neighbours.",
		OutputSchema: objectSchema,
		Annotations:  readOnly,
	}, s.readNote)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:         "propose_skill",
		Description:  "Propose a SKILL.md for every agent; a person approves it.",
		OutputSchema: objectSchema,
	}, s.proposeSkill)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:         "status",
		Description:  "Palace state: model, wings, notes, conflicts, daemon.",
		OutputSchema: objectSchema,
		Annotations:  readOnly,
	}, s.status)
}

// call runs f as the only call into the app, turning a panic into a tool
// error so one bad call never takes the server down.
func (s *mcpServer) call(f func() error) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			s.a.log.Error("mcp: tool call panicked", "panic", r)
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	return f()
}

// toolText is a tool result whose content is the CLI's text output.
func toolText(render func(io.Writer)) *mcp.CallToolResult {
	var b strings.Builder
	render(&b)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}
}

func (s *mcpServer) search(ctx context.Context, _ *mcp.CallToolRequest, in searchArgs) (*mcp.CallToolResult, mcpSearchResult, error) {
	var out api.SearchResult
	err := s.call(func() (err error) {
		if in.Results == 0 {
			in.Results = palace.DefaultResults
		}
		out, err = s.a.search(ctx, in)
		return err
	})
	if err != nil {
		return nil, mcpSearchResult{}, err
	}
	return toolText(func(w io.Writer) { printHits(w, out) }), compactSearch(out), nil
}

func (s *mcpServer) wakeUp(ctx context.Context, _ *mcp.CallToolRequest, in wakeupArgs) (*mcp.CallToolResult, mcpDigest, error) {
	var d wakeup.Digest
	err := s.call(func() (err error) {
		if in.Tokens == 0 {
			in.Tokens = wakeup.DefaultTokens
		}
		d, err = s.a.wakeUp(ctx, in)
		return err
	})
	if err != nil {
		return nil, mcpDigest{}, err
	}
	return toolText(func(w io.Writer) { io.WriteString(w, d.Markdown()) }), compactDigest(d), nil
}

// conflictsArgs is a call of the conflicts tool.
type conflictsArgs struct {
	Wing  string `json:"wing,omitempty" jsonschema:"default: this server's, else all"`
	Check bool   `json:"check,omitempty" jsonschema:"add safe_to_write"`
}

// conflictsResult is what `memminer conflicts --json` prints, and with
// check whether writing is safe.
type conflictsResult struct {
	conflicts.List
	SafeToWrite *bool `json:"safe_to_write,omitempty"`
}

func (s *mcpServer) conflicts(ctx context.Context, _ *mcp.CallToolRequest, in conflictsArgs) (*mcp.CallToolResult, conflictsResult, error) {
	var out conflictsResult
	wing := in.Wing
	if wing == "" {
		wing = s.wing
	}
	err := s.call(func() error {
		w, err := normalizeWing(wing)
		if err != nil {
			return err
		}
		wing = w
		out.List, err = s.a.openConflicts(ctx, wing)
		return err
	})
	if err != nil {
		return nil, out, err
	}
	res := toolText(func(w io.Writer) { printConflicts(w, out.List, wing) })
	if in.Check {
		safe := len(out.Conflicts) == 0 && out.ScanError == nil
		out.SafeToWrite = &safe
		verdict := "safe to write"
		switch {
		case len(out.Conflicts) > 0:
			verdict = "not safe to write: " + conflictsOpenMessage(wing, len(out.Conflicts))
		case out.ScanError != nil:
			verdict = "not known to be safe to write: the scan was incomplete: " + *out.ScanError
		}
		res.Content = append(res.Content, &mcp.TextContent{Text: verdict})
	}
	return res, out, nil
}

// statusArgs is a call of the status tool, which takes no arguments.
type statusArgs struct{}

func (s *mcpServer) status(ctx context.Context, _ *mcp.CallToolRequest, _ statusArgs) (*mcp.CallToolResult, statusOutput, error) {
	var out statusOutput
	err := s.call(func() (err error) {
		if out.Status, err = s.a.status(ctx); err == nil {
			s.a.attention(&out.Status)
		}
		out.Agents = s.a.connectedAgents()
		return err
	})
	if err != nil {
		return nil, out, err
	}
	return toolText(func(w io.Writer) { printStatus(w, out.Status); printAgents(w, out.Agents) }), out, nil
}

// serveStdio serves one MCP session over in and out until the client
// closes in or ctx is cancelled.
func (s *mcpServer) serveStdio(ctx context.Context, in io.ReadCloser, out io.Writer) error {
	ss, err := s.srv.Connect(ctx, &lineTransport{in: in, out: out, maxLine: maxMCPMessageBytes, log: s.a.log}, nil)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-ended
		return nil
	case err := <-ended:
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
			return nil
		}
		return fmt.Errorf("mcp: %w", err)
	}
}

// listenMCP listens on addr for the --http transport, refusing an address
// other machines can reach unless allowRemote.
func listenMCP(addr string, allowRemote bool) (net.Listener, error) {
	if err := listenaddr.Check("--http", addr, "127.0.0.1:8765", allowRemote); err != nil {
		return nil, usagef("%v", allowRemoteAdvice(err, "allow-remote"))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http: %w", err)
	}
	return ln, nil
}
