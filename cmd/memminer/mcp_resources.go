package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/memory/markdown"
	"github.com/memminer/memminer/memory/memfile"
	"github.com/memminer/memminer/memory/secrets"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
)

const (
	wakeupURI     = "memminer://wake-up"
	wingURIPrefix = "memminer://wing/"
	markdownMIME  = "text/markdown"
)

// addResources adds the wake-up digest and, through a template, every
// wing's memory files. Which files there are changes as agents write, so
// resources/list adds them when it is asked rather than once at start.
func (s *mcpServer) addResources() {
	s.srv.AddResource(&mcp.Resource{
		URI: wakeupURI, Name: "wake-up", MIMEType: markdownMIME,
		Description: "The session-start digest of the whole hive.",
	}, s.readWakeUp)
	s.srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: wingURIPrefix + "{wing}/{+file}", Name: "memory file", MIMEType: markdownMIME,
		Description: "A wing's memory file, read-only.",
	}, s.readWingFile)
	s.srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: packURIPrefix + "{name}", Name: "context pack", MIMEType: markdownMIME,
		Description: "A Context Pack of the hive, rendered: the notes its task needs, governed.",
	}, s.readPack)
	s.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method != "resources/list" || err != nil {
				return res, err
			}
			lr, ok := res.(*mcp.ListResourcesResult)
			if !ok || lr.NextCursor != "" {
				return res, nil // the wing files follow the last page
			}
			files, err := s.memoryFiles(ctx)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				lr.Resources = append(lr.Resources, &mcp.Resource{URI: f.uri, Name: f.wing + "/" + f.rel, MIMEType: markdownMIME, Size: f.size})
			}
			lr.Resources = append(lr.Resources, s.packResources()...)
			return lr, nil
		}
	})
}

func (s *mcpServer) readWakeUp(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	var d wakeup.Digest
	err := s.call(func() (err error) {
		d, err = s.a.wakeUp(ctx, wakeupArgs{Tokens: wakeup.DefaultTokens})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: markdownMIME, Text: d.Markdown()}}}, nil
}

// memoryFile is one file of a wing, as a resource.
type memoryFile struct {
	uri, wing, rel, path string
	size                 int64
}

// memoryFiles lists the files mine reads in every wing's roots, the
// daemon's wings when one runs, otherwise the palace's.
func (s *mcpServer) memoryFiles(ctx context.Context) ([]memoryFile, error) {
	var wings []palace.WingInfo
	err := s.call(func() error {
		var err error
		wings, err = s.a.service().Wings(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []memoryFile
	seen := map[string]bool{}
	for _, w := range wings {
		for _, root := range w.Roots {
			for _, f := range rootFiles(root) {
				rel := filepath.ToSlash(f.rel)
				if hive.IsInboxFile(rel) {
					continue // what waits for approval is not served to agents
				}
				uri := wingURIPrefix + w.ID + "/" + escapePath(rel)
				if seen[uri] {
					continue // two roots of a wing with the same file name: the first is served
				}
				seen[uri] = true
				out = append(out, memoryFile{uri: uri, wing: w.ID, rel: rel, path: f.path, size: f.size})
			}
		}
	}
	return out, nil
}

type rootFile struct {
	path, rel string
	size      int64
}

// rootFiles lists the files a mine of root reads: root itself when it is
// a file, else what mine.ListFiles finds below it.
func rootFiles(root string) []rootFile {
	info, err := os.Stat(root)
	if err != nil {
		return nil // a root that is gone has no files to serve
	}
	if !info.IsDir() {
		return []rootFile{{path: root, rel: filepath.Base(root), size: info.Size()}}
	}
	files, _ := mine.ListFiles(root)
	out := make([]rootFile, 0, len(files))
	for _, f := range files {
		rel, err := filepath.Rel(root, f.Path)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		out = append(out, rootFile{path: f.Path, rel: rel, size: f.Size})
	}
	return out
}

// escapePath escapes each segment of a slash-separated path for a URI.
func escapePath(rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// readWingFile serves a file of the listing; any other URI is not found,
// so a client cannot read outside the wings' memory files.
func (s *mcpServer) readWingFile(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	files, err := s.memoryFiles(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if f.uri != uri {
			continue
		}
		text, hash, err := readMemoryFile(f.path, s.a.cfg.MaxFileBytes)
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: uri, MIMEType: markdownMIME, Text: text, Meta: mcp.Meta{"hash": hash},
		}}}, nil
	}
	return nil, mcp.ResourceNotFoundError(uri)
}

// readMemoryFile reads a memory file as text, refusing what mine would
// not mine: anything but a regular file (without blocking on a FIFO), a
// file over max bytes, or one that is not UTF-8 text. The text has each
// secret hidden, as every output has (secrets.Hide); hash is the file's
// own, which remember's expect_hash takes.
func readMemoryFile(path string, max int64) (text, hash string, err error) {
	data, err := hivefile.ReadLimited(path, max+1)
	if err != nil {
		return "", "", err
	}
	if int64(len(data)) > max {
		return "", "", fmt.Errorf("%s is larger than max_file_bytes (%d bytes)", path, max)
	}
	if err := markdown.CheckText(data); err != nil {
		return "", "", fmt.Errorf("%s: %w", path, err)
	}
	text, _ = secrets.Hide(string(data))
	return text, memfile.Hash(data), nil
}
