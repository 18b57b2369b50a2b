package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineTransport is MCP's stdio transport (one JSON-RPC message a line)
// that survives bad input. The SDK's own ends the session at the first line
// that is not JSON or is too long; this one answers such a line with a
// JSON-RPC error, as the specification asks, and reads on.
type lineTransport struct {
	in      io.ReadCloser
	out     io.Writer
	maxLine int
	log     *slog.Logger
}

// Connect implements mcp.Transport.
func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{out: t.out, incoming: make(chan lineRead), closed: make(chan struct{}), in: t.in}
	go c.readLines(bufio.NewReader(t.in), t.maxLine, t.log)
	return c, nil
}

type lineRead struct {
	msg jsonrpc.Message
	err error
}

// lineConn is a connection of lineTransport.
type lineConn struct {
	in        io.Closer
	out       io.Writer
	wmu       sync.Mutex // one message a line, never interleaved
	incoming  chan lineRead
	closed    chan struct{}
	closeOnce sync.Once
}

// readLines decodes lines until the input ends, delivering messages and
// answering malformed ones.
func (c *lineConn) readLines(r *bufio.Reader, maxLine int, log *slog.Logger) {
	for {
		line, tooLong, err := readLine(r, maxLine)
		if tooLong {
			c.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message longer than %d bytes", maxLine), log)
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			if msg, ok := c.decode(line, log); ok {
				select {
				case c.incoming <- lineRead{msg: msg}:
				case <-c.closed:
					return
				}
			}
		}
		if err != nil {
			select {
			case c.incoming <- lineRead{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// readLine reads one line of at most max bytes; a longer one is read to
// its end and dropped (tooLong).
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// decode decodes one line, answering it with a protocol error when it is
// no JSON-RPC message memminer serves.
func (c *lineConn) decode(line []byte, log *slog.Logger) (jsonrpc.Message, bool) {
	if !json.Valid(line) {
		c.refuse(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON", log)
		return nil, false
	}
	if line[0] == '[' {
		c.refuse(nil, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported", log)
		return nil, false
	}
	if id, bad := idOnly(line); bad {
		c.refuse(id, jsonrpc.CodeInvalidRequest, errIDOnly, log)
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &probe)
		c.refuse(probe.ID, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error(), log)
		return nil, false
	}
	return msg, true
}

// errIDOnly is the answer to a message with an id and nothing else.
const errIDOnly = "invalid request: a message with an id needs a method (a request) or a result or error (a response)"

// idOnly reports whether msg is one JSON-RPC object with an id but no
// method, result or error: neither request nor response, so the SDK would
// drop it unanswered. id is its id.
func idOnly(msg []byte) (id json.RawMessage, bad bool) {
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(msg, &probe) != nil || len(probe.ID) == 0 || string(probe.ID) == "null" {
		return nil, false
	}
	return probe.ID, probe.Method == nil && probe.Result == nil && probe.Error == nil
}

// refusal is the JSON-RPC error answering a message that was not served.
// id is the message's id when it has a usable one, else the answer's id
// is null.
func refusal(id json.RawMessage, code int64, message string) []byte {
	if len(id) == 0 || (id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-') {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message}})
	return data
}

// refuse answers a message that was not served (see refusal).
func (c *lineConn) refuse(id json.RawMessage, code int64, message string, log *slog.Logger) {
	log.Warn("mcp: refused a message", "error", message)
	_ = c.writeLine(refusal(id, code, message))
}

func (c *lineConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// Read implements mcp.Connection.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case r := <-c.incoming:
		return r.msg, r.err
	}
}

// Write implements mcp.Connection.
func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

// Close implements mcp.Connection. It closes the input, which ends a
// read of a pipe; stdout stays open for whatever the process writes last.
func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = c.in.Close()
	})
	return err
}

// SessionID implements mcp.Connection: stdio has one session, unnamed.
func (c *lineConn) SessionID() string { return "" }
