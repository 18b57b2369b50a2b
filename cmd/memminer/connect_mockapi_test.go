package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// mockModel is a model API on 127.0.0.1 that the real agent clients talk
// to in tests: Anthropic's Messages API (Claude Code), OpenAI's Responses
// API (Codex), Chat Completions API (OpenCode) and Google's Gemini API
// (Gemini CLI), streamed as server-sent events. It records every request
// body. Its script: when the request holds capture's Stop hook request
// (askMarker) and no remember call of its own yet, it calls memminer's
// remember tool with learnedNote; when the request offers memminer's
// search tool and holds no result of it yet, it calls search for five
// hits of searchQuery; otherwise it answers with text.
type mockModel struct {
	URL         string
	searchQuery string
	mu          sync.Mutex
	// bash, when set, is a shell command the model first asks the
	// client's shell tool to run (Claude Code's Bash, Gemini CLI's
	// run_shell_command, OpenCode's bash: the pre-action hook's tests);
	// under mu, as the server's handlers read it.
	bash string
	// write, when set, is a file the model first asks Claude Code's
	// Write tool to write (the auto memory test), under mu.
	write    *fileWrite
	requests []string
}

// fileWrite is a call of Claude Code's Write tool.
type fileWrite struct {
	Path    string `json:"file_path"`
	Content string `json:"content"`
}

// setWrite makes the model ask Claude Code's Write tool to write content
// to path.
func (m *mockModel) setWrite(path, content string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.write = &fileWrite{Path: path, Content: content}
}

func (m *mockModel) fileWrite() *fileWrite {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.write
}

// setBash makes the model ask the client's shell tool to run command.
func (m *mockModel) setBash(command string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bash = command
}

func (m *mockModel) bashCommand() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bash
}

func newMockModel(t *testing.T, searchQuery string) *mockModel {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &mockModel{URL: "http://" + ln.Addr().String(), searchQuery: searchQuery}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/messages", m.messages)
	mux.HandleFunc("/v1/responses", m.responses)
	mux.HandleFunc("/v1/chat/completions", m.chatCompletions)
	mux.HandleFunc("/v1beta/models/", m.generateContent)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead || r.URL.Path == "/" {
			w.WriteHeader(http.StatusOK)
			return
		}
		m.record(r)
		http.NotFound(w, r)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return m
}

func (m *mockModel) record(r *http.Request) []byte {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.requests = append(m.requests, r.URL.Path+" "+string(body))
	m.mu.Unlock()
	return body
}

// Requests returns the bodies received so far, each after its path.
func (m *mockModel) Requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.requests...)
}

// firstWith returns the first request containing every one of subs.
func (m *mockModel) firstWith(subs ...string) (string, bool) {
	for _, r := range m.Requests() {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(r, s)
		}
		if all {
			return r, true
		}
	}
	return "", false
}

func sse(w http.ResponseWriter, events ...any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	for _, e := range events {
		b, _ := json.Marshal(e)
		var typ struct{ Type string }
		json.Unmarshal(b, &typ)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, b)
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

type obj = map[string]any

// askMarker is a phrase of capture's Stop hook request (askRequest), and
// learnedNote what the mock model remembers when it reads it.
const (
	askMarker   = "recorded nothing in the hive's memory"
	learnedNote = "The nightly job fails when the WAL archive bucket is full; empty it with make prune-wal."
)

// messages answers Anthropic's POST /v1/messages.
func (m *mockModel) messages(w http.ResponseWriter, r *http.Request) {
	body := m.record(r)
	var req struct {
		Model    string
		Tools    []struct{ Name string }
		Messages []struct {
			Content json.RawMessage
		}
	}
	json.Unmarshal(body, &req)
	offered := false
	for _, t := range req.Tools {
		offered = offered || t.Name == "mcp__memminer__search"
	}
	answered := strings.Contains(string(body), `"tool_result"`)
	usage := obj{"input_tokens": 10, "output_tokens": 1}
	start := obj{"type": "message_start", "message": obj{"id": "msg_mock", "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}}
	// clientTool streams one call of the client's tool name.
	clientTool := func(id, name string, input any) {
		in, _ := json.Marshal(input)
		sse(w, start,
			obj{"type": "content_block_start", "index": 0, "content_block": obj{"type": "tool_use", "id": id, "name": name, "input": obj{}}},
			obj{"type": "content_block_delta", "index": 0, "delta": obj{"type": "input_json_delta", "partial_json": string(in)}},
			obj{"type": "content_block_stop", "index": 0},
			obj{"type": "message_delta", "delta": obj{"stop_reason": "tool_use", "stop_sequence": nil}, "usage": obj{"output_tokens": 5}},
			obj{"type": "message_stop"})
	}
	// toolUse streams one call of memminer's tool name with input.
	toolUse := func(id, name string, input obj) { clientTool(id, "mcp__memminer__"+name, input) }
	if bash := m.bashCommand(); bash != "" && !strings.Contains(string(body), "toolu_bash") {
		clientTool("toolu_bash", "Bash", obj{"command": bash, "description": "the pre-action test's command"})
		return
	}
	if fw := m.fileWrite(); fw != nil && !strings.Contains(string(body), "toolu_write") {
		clientTool("toolu_write", "Write", fw)
		return
	}
	if strings.Contains(string(body), askMarker) && !strings.Contains(string(body), "toolu_mock2") {
		toolUse("toolu_mock2", "remember", obj{"text": learnedNote, "confidence": "verified"})
		return
	}
	if offered && !answered {
		toolUse("toolu_mock1", "search", obj{"query": m.searchQuery, "results": 5})
		return
	}
	sse(w, start,
		obj{"type": "content_block_start", "index": 0, "content_block": obj{"type": "text", "text": ""}},
		obj{"type": "content_block_delta", "index": 0, "delta": obj{"type": "text_delta", "text": "mock answer: done"}},
		obj{"type": "content_block_stop", "index": 0},
		obj{"type": "message_delta", "delta": obj{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": obj{"output_tokens": 5}},
		obj{"type": "message_stop"})
}

// responses answers OpenAI's POST /v1/responses.
func (m *mockModel) responses(w http.ResponseWriter, r *http.Request) {
	body := m.record(r)
	s := string(body)
	offered := strings.Contains(s, `"mcp__memminer"`)
	answered := strings.Contains(s, `"function_call_output"`)
	resp := func(status string, output []any) obj {
		return obj{"id": "resp_mock", "object": "response", "created_at": 0, "status": status, "model": "mock-model", "output": output,
			"usage": obj{"input_tokens": 10, "input_tokens_details": obj{"cached_tokens": 0}, "output_tokens": 5,
				"output_tokens_details": obj{"reasoning_tokens": 0}, "total_tokens": 15}}
	}
	var item obj
	switch {
	case strings.Contains(s, askMarker) && !strings.Contains(s, "call_mock2"):
		args, _ := json.Marshal(obj{"text": learnedNote, "confidence": "verified"})
		item = obj{"type": "function_call", "id": "fc_mock2", "call_id": "call_mock2", "name": "remember", "namespace": "mcp__memminer",
			"arguments": string(args), "status": "completed"}
	case offered && !answered:
		args, _ := json.Marshal(obj{"query": m.searchQuery, "results": 5})
		item = obj{"type": "function_call", "id": "fc_mock1", "call_id": "call_mock1", "name": "search", "namespace": "mcp__memminer",
			"arguments": string(args), "status": "completed"}
	default:
		item = obj{"type": "message", "id": "msg_mock1", "role": "assistant", "status": "completed",
			"content": []any{obj{"type": "output_text", "text": "mock answer: done", "annotations": []any{}}}}
	}
	sse(w,
		obj{"type": "response.created", "response": resp("in_progress", []any{})},
		obj{"type": "response.output_item.added", "output_index": 0, "item": item},
		obj{"type": "response.output_item.done", "output_index": 0, "item": item},
		obj{"type": "response.completed", "response": resp("completed", []any{item})})
}

// chatCompletions answers OpenAI's POST /v1/chat/completions, which
// OpenCode's OpenAI-compatible provider sends. Its chunks carry no event
// names, only data lines, and end with [DONE].
func (m *mockModel) chatCompletions(w http.ResponseWriter, r *http.Request) {
	body := m.record(r)
	var req struct {
		Tools []struct {
			Function struct{ Name string }
		}
		Messages []struct{ Role string }
	}
	json.Unmarshal(body, &req)
	offered, answered := false, false
	for _, t := range req.Tools {
		offered = offered || t.Function.Name == "memminer_search"
	}
	for _, msg := range req.Messages {
		answered = answered || msg.Role == "tool"
	}
	chunk := func(delta obj, finish any) obj {
		return obj{"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
			"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	var chunks []obj
	if bash := m.bashCommand(); bash != "" && !strings.Contains(string(body), "call_bash") {
		args, _ := json.Marshal(obj{"command": bash, "description": "the pre-action test's command"})
		chunks = []obj{
			chunk(obj{"role": "assistant", "tool_calls": []any{obj{"index": 0, "id": "call_bash", "type": "function",
				"function": obj{"name": "bash", "arguments": string(args)}}}}, nil),
			chunk(obj{}, "tool_calls"),
		}
	} else if offered && !answered {
		args, _ := json.Marshal(obj{"query": m.searchQuery, "results": 5})
		chunks = []obj{
			chunk(obj{"role": "assistant", "tool_calls": []any{obj{"index": 0, "id": "call_mock1", "type": "function",
				"function": obj{"name": "memminer_search", "arguments": string(args)}}}}, nil),
			chunk(obj{}, "tool_calls"),
		}
	} else {
		chunks = []obj{chunk(obj{"role": "assistant", "content": "mock answer: done"}, nil), chunk(obj{}, "stop")}
	}
	last := chunks[len(chunks)-1]
	last["usage"] = obj{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range chunks {
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// geminiSearchTool is the name Gemini CLI gives memminer's search tool.
const geminiSearchTool = "mcp_memminer_search"

// generateContent answers the Gemini API's POST
// /v1beta/models/MODEL:streamGenerateContent?alt=sse, and
// :generateContent (Gemini CLI's model router asks it first, unstreamed).
func (m *mockModel) generateContent(w http.ResponseWriter, r *http.Request) {
	body := m.record(r)
	s := string(body)
	offered := strings.Contains(s, `"name":"`+geminiSearchTool+`"`)
	answered := strings.Contains(s, `"functionResponse"`)
	part := obj{"text": "mock answer: done"}
	if bash := m.bashCommand(); bash != "" {
		if strings.Contains(s, `"name":"run_shell_command"`) && !answered {
			part = obj{"functionCall": obj{"name": "run_shell_command", "args": obj{"command": bash, "description": "the pre-action test's command"}}}
		}
	} else if offered && !answered {
		part = obj{"functionCall": obj{"name": geminiSearchTool, "args": obj{"query": m.searchQuery, "results": 5}}}
	}
	resp := obj{"candidates": []any{obj{"content": obj{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": obj{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}
	b, _ := json.Marshal(resp)
	if !strings.Contains(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\n\n", b)
}
