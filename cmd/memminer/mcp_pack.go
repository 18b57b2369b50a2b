package main

import (
	"context"
	"errors"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memminer/memminer/recall/pack"
)

const packURIPrefix = "memminer://pack/"

// packArgs is a call of the pack tool: render a pack with the default
// budget, or mark it. The packs are listed as resources. Every byte of a
// tool's schema is paid in every session's context.
type packArgs struct {
	Name string `json:"name"`
	Mark string `json:"mark,omitempty"`
	Note string `json:"note,omitempty"`
}

// packMarked is what the pack tool returns for a mark.
type packMarked struct {
	Pack   string `json:"pack"`
	Marked string `json:"marked"`
	pack.State
}

func (s *mcpServer) pack(ctx context.Context, _ *mcp.CallToolRequest, in packArgs) (*mcp.CallToolResult, any, error) {
	var (
		out  any
		text string
	)
	err := s.call(func() error {
		if s.a.cfg.Hive == "" {
			return errors.New("no hive: start the server with --hive DIR, set MEMMINER_HIVE, or put hive: in the config file")
		}
		switch {
		case in.Name == "":
			return errors.New("pack needs a name (the memminer://pack/ resources are the packs)")
		case in.Mark != "":
			kind, err := pack.ParseMark(in.Mark)
			if err != nil {
				return err
			}
			pk, err := s.a.loadPack(in.Name)
			if err != nil {
				return err
			}
			if err := pack.AddMark(ctx, s.a.cfg.Hive, in.Name, pack.Mark{Time: time.Now(), Kind: kind, By: s.agent(), Note: in.Note}); err != nil {
				return err
			}
			marks, err := pack.Marks(s.a.cfg.Hive, in.Name)
			st := pack.StateOf(pk, marks)
			out, text = packMarked{Pack: in.Name, Marked: kind, State: st}, "marked pack "+in.Name+" "+kind
			return err
		}
		r, err := s.a.renderPack(ctx, in.Name, pack.DefaultTokens, false, s.agent(), domainArgs{})
		out, text = r, r.Text()
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return toolText(func(w io.Writer) { io.WriteString(w, text) }), out, nil
}

// agent is who the server's pack marks and uses are attributed to: its
// wing, else "mcp".
func (s *mcpServer) agent() string {
	if s.wing != "" {
		return s.wing
	}
	return "mcp"
}

// packResources lists the hive's packs as resources.
func (s *mcpServer) packResources() []*mcp.Resource {
	var out []*mcp.Resource
	s.call(func() error {
		if s.a.cfg.Hive == "" {
			return nil
		}
		names, _ := pack.Names(s.a.cfg.Hive)
		for _, n := range names {
			out = append(out, &mcp.Resource{URI: packURIPrefix + url.PathEscape(n), Name: "pack " + n, MIMEType: markdownMIME, Description: "Context Pack " + n + ", rendered"})
		}
		return nil
	})
	return out
}

// readPack serves a pack rendered with the default budget.
func (s *mcpServer) readPack(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	name, err := url.PathUnescape(strings.TrimPrefix(uri, packURIPrefix))
	if err != nil || pack.CheckName(name) != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	var r pack.Rendered
	err = s.call(func() (err error) {
		if s.a.cfg.Hive == "" {
			return errors.New("no hive configured")
		}
		r, err = s.a.renderPack(ctx, name, pack.DefaultTokens, false, s.agent(), domainArgs{})
		return err
	})
	if errors.Is(err, pack.ErrNoPack) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: markdownMIME, Text: r.Text()}}}, nil
}
