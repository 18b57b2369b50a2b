package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memminer/memminer/memory/remember"
)

// rememberArgs is a call of the remember tool. The wing is the server's:
// an agent cannot write another agent's memory through MCP.
type rememberArgs struct {
	Text           string   `json:"text" jsonschema:"the fact, one note"`
	Heading        string   `json:"heading,omitempty" jsonschema:"section to append under"`
	Tags           []string `json:"tags,omitempty"`
	Supersedes     []string `json:"supersedes,omitempty" jsonschema:"ids (or FILE:LINE) of notes it replaces"`
	ExpectHash     string   `json:"expect_hash,omitempty" jsonschema:"file's hash, else refuse"`
	AllowDuplicate bool     `json:"allow_duplicate,omitempty" jsonschema:"even if the wing has the same fact"`
	// Confidence "hypothesis" sends the note to the inbox; risk is the CLI's
	// (every byte of a schema is paid in every session's context).
	Confidence string `json:"confidence,omitempty"`
}

func (s *mcpServer) remember(ctx context.Context, _ *mcp.CallToolRequest, in rememberArgs) (*mcp.CallToolResult, remember.Result, error) {
	if s.wing == "" {
		return nil, remember.Result{}, errors.New("remember needs this server's wing: start it with memminer mcp --wing ID (or set MEMMINER_WING); nothing written")
	}
	req := remember.Request{
		Wing: s.wing, Text: in.Text, Heading: in.Heading, Tags: in.Tags,
		Supersedes: in.Supersedes, ExpectHash: in.ExpectHash, AllowDuplicate: in.AllowDuplicate,
		Confidence: in.Confidence,
	}
	var (
		res    remember.Result
		remErr error
	)
	err := s.call(func() error {
		if s.a.cfg.Hive == "" {
			return errors.New("no hive: start the server with --hive DIR, set MEMMINER_HIVE, or put hive: in the config file; nothing written")
		}
		var err error
		if req.Supersedes, err = s.a.fullRefs(ctx, req.Supersedes, "supersedes", false); err != nil {
			return fmt.Errorf("%w; nothing written", err)
		}
		res, remErr = s.a.remember(ctx, req)
		return nil
	})
	switch {
	case err != nil:
		return nil, res, err
	case errors.Is(remErr, remember.ErrConflict) && gitMarkersOnly(remErr):
		return nil, res, fmt.Errorf("%v\nnothing written; the file holds Git conflict markers: resolve the merge (the conflicts tool lists it), then remember again", remErr)
	case errors.Is(remErr, remember.ErrConflict):
		return nil, res, fmt.Errorf("%v\nnothing written; merge the copy into the original and delete it (the conflicts tool lists it), then remember again", remErr)
	case errors.Is(remErr, remember.ErrSecret):
		return nil, res, fmt.Errorf("%v\nnothing written: %s; then remember again", remErr, secretAdvice)
	case errors.Is(remErr, remember.ErrHashMismatch):
		return nil, res, fmt.Errorf("%v\nnothing written; read the file again (its resource memminer://wing/%s/… has the hash in _meta), then remember", remErr, s.wing)
	case remErr != nil && !errors.Is(remErr, remember.ErrNotMined):
		return nil, res, rememberError(remErr, s.wing)
	}
	out := toolText(func(w io.Writer) { printRemembered(w, res) })
	if remErr != nil {
		// Written, so not a failure to retry: the next mine indexes it.
		out.Content = append(out.Content, &mcp.TextContent{Text: "warning: " + remErr.Error()})
	}
	return out, res, nil
}
