package connect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// jsonEdit edits a JSON file in place with sjson, which rewrites only the
// bytes of the values it sets: every other key keeps its place, order and
// formatting.
type jsonEdit struct {
	sets    []jsonSet
	appends []jsonAppend
}

// jsonSet is an object key connect sets: value is raw JSON; empty, the
// key is only taken out again if it holds memminer's value. A key already
// there that ours does not recognise is someone else's and is not
// touched: connect refuses the file (a *TakenError), or with yield
// leaves the key and goes on.
type jsonSet struct {
	path  string
	value string
	ours  func(gjson.Result) bool
	yield bool
}

// jsonAppend is an element connect appends to an array; ours recognises
// the elements connect put there (under any earlier settings).
type jsonAppend struct {
	path  string
	value string
	ours  func(gjson.Result) bool
}

// hookEntry and hookCommand are one entry of a hooks file's event list,
// with the keys in the order the clients' docs show them.
type hookEntry struct {
	Hooks []hookCommand `json:"hooks"`
}

type hookCommand struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	// Timeout, in seconds, when the client's default is too short.
	Timeout int `json:"timeout,omitempty"`
}

// stdioServer is an MCP server entry of Claude Code's files.
type stdioServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// hookEvent is one hook of a hooks file: the command run on the event,
// and its timeout in seconds (0: the client's default).
type hookEvent struct {
	name, command string
	timeout       int
}

// hooksEdit adds one command hook per event to a hooks object in the shape
// both Claude Code and Codex read: {"hooks": {"EVENT": [{"hooks":
// [{"type": "command", "command": CMD}]}]}}.
type hooksEdit struct {
	ours   interface{ MatchString(string) bool }
	events []hookEvent
}

func (h hooksEdit) json() jsonEdit {
	var e jsonEdit
	for _, ev := range h.events {
		entry, _ := json.Marshal(hookEntry{Hooks: []hookCommand{{Type: "command", Command: ev.command, Timeout: ev.timeout}}})
		e.appends = append(e.appends, jsonAppend{path: "hooks." + ev.name, value: string(entry), ours: h.ourEntry})
	}
	return e
}

// ourEntry reports whether a hook entry runs only memminer's hook commands.
func (h hooksEdit) ourEntry(r gjson.Result) bool {
	cmds := r.Get("hooks.#.command").Array()
	if len(cmds) == 0 {
		return false
	}
	for _, c := range cmds {
		if !h.ours.MatchString(c.String()) {
			return false
		}
	}
	return true
}

// mcpServersEdit registers server as mcpServers.memminer, the shape of
// Claude Code's ~/.claude.json and a project's .mcp.json.
func mcpServersEdit(server stdioServer) jsonEdit {
	raw, _ := json.Marshal(server)
	return jsonEdit{sets: []jsonSet{{path: "mcpServers." + serverName, value: string(raw), ours: ourServer}}}
}

// ourServer recognises an MCP server entry that runs `memminer mcp`.
func ourServer(r gjson.Result) bool {
	cmd := r.Get("command").String()
	return strings.Contains(cmd, "memminer") && r.Get("args.0").String() == "mcp"
}

func equalString(s string) func(gjson.Result) bool {
	return func(r gjson.Result) bool { return r.Type == gjson.String && r.Str == s }
}

func (e jsonEdit) format() string { return "JSON" }

func (e jsonEdit) apply(cur, orig []byte) ([]byte, error) {
	created := len(bytes.TrimSpace(cur)) == 0
	if created {
		cur = []byte("{}")
	}
	if err := checkJSON(cur, e); err != nil {
		return nil, err
	}
	out, end := splitEnd(cur)
	var err error
	for _, s := range e.sets {
		if s.value == "" {
			continue
		}
		r := gjson.GetBytes(out, s.path)
		if r.Exists() {
			if sameJSON(r.Raw, s.value) {
				continue
			}
			if !s.ours(r) && s.yield {
				continue
			}
			if !s.ours(r) {
				return nil, &TakenError{Key: s.path}
			}
		}
		if out, err = sjson.SetRawBytes(out, s.path, []byte(s.value)); err != nil {
			return nil, fmt.Errorf("set %s: %w", s.path, err)
		}
	}
	for _, a := range e.appends {
		had := gjson.GetBytes(orig, a.path).Array()
		elems := gjson.GetBytes(out, a.path).Array()
		var ours []int
		same := false
		for i, el := range elems {
			// An element the file had before connect is the user's.
			if a.ours(el) && !containsJSON(had, el.Raw) {
				ours = append(ours, i)
				same = sameJSON(el.Raw, a.value)
			}
		}
		if len(ours) == 1 && same || len(ours) == 0 && containsJSON(had, a.value) {
			continue // in place, or the user's own is the same
		}
		for i := len(ours) - 1; i >= 0; i-- {
			if out, err = sjson.DeleteBytes(out, a.path+"."+strconv.Itoa(ours[i])); err != nil {
				return nil, fmt.Errorf("remove from %s: %w", a.path, err)
			}
		}
		if out, err = sjson.SetRawBytes(out, a.path+".-1", []byte(a.value)); err != nil {
			return nil, fmt.Errorf("append to %s: %w", a.path, err)
		}
	}
	if created {
		return indentJSON(out), nil
	}
	return slices.Concat(out, end), nil
}

func (e jsonEdit) remove(cur, orig []byte) ([]byte, error) {
	if len(bytes.TrimSpace(cur)) == 0 {
		return cur, nil
	}
	if err := checkJSON(cur, e); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(orig)) == 0 || !gjson.ValidBytes(orig) {
		orig = []byte("{}")
	}
	out, end := splitEnd(cur)
	var err error
	var touched []string
	for _, s := range e.sets {
		r := gjson.GetBytes(out, s.path)
		switch o := gjson.GetBytes(orig, s.path); {
		case s.yield && !(r.Exists() && s.ours(r)):
			// Not memminer's value (any more): connect never replaced it.
		case o.Exists():
			out, err = sjson.SetRawBytes(out, s.path, []byte(o.Raw))
		case r.Exists() && s.ours(r):
			out, err = sjson.DeleteBytes(out, s.path)
		}
		if err != nil {
			return nil, fmt.Errorf("restore %s: %w", s.path, err)
		}
		touched = append(touched, parents(s.path)[1:]...)
	}
	for _, a := range e.appends {
		had := gjson.GetBytes(orig, a.path).Array()
		elems := gjson.GetBytes(out, a.path).Array()
		for i := len(elems) - 1; i >= 0; i-- {
			if !a.ours(elems[i]) || containsJSON(had, elems[i].Raw) {
				continue
			}
			if out, err = sjson.DeleteBytes(out, a.path+"."+strconv.Itoa(i)); err != nil {
				return nil, fmt.Errorf("remove from %s: %w", a.path, err)
			}
		}
		touched = append(touched, parents(a.path)...)
	}
	// Containers connect created and left empty go too, deepest first.
	for changed := true; changed; {
		changed = false
		for _, p := range touched {
			r := gjson.GetBytes(out, p)
			if !r.Exists() || gjson.GetBytes(orig, p).Exists() || !emptyContainer(r) {
				continue
			}
			if out, err = sjson.DeleteBytes(out, p); err != nil {
				return nil, fmt.Errorf("remove %s: %w", p, err)
			}
			changed = true
		}
	}
	return slices.Concat(out, end), nil
}

// splitEnd cuts a JSON file into its value and what follows it (a final
// newline, blank lines): sjson drops that end when it adds a key to the
// top-level object, and the file must keep it.
func splitEnd(b []byte) (value, end []byte) {
	value = bytes.TrimRight(b, " \t\r\n")
	return value, b[len(value):]
}

// empty reports whether a file holds nothing but what connect would add:
// a file connect created and is left with nothing is deleted.
func (e jsonEdit) empty(b []byte) bool {
	r := gjson.ParseBytes(b)
	return len(bytes.TrimSpace(b)) == 0 || (r.IsObject() && emptyContainer(r))
}

// checkJSON refuses a file that is not a JSON object, or whose keys on the
// way to what connect edits are not objects and arrays.
func checkJSON(b []byte, e jsonEdit) error {
	if !gjson.ValidBytes(b) {
		var v any
		err := json.Unmarshal(b, &v)
		if err == nil {
			err = fmt.Errorf("not valid JSON")
		}
		return &FormatError{Format: "JSON", Err: err}
	}
	if !gjson.ParseBytes(b).IsObject() {
		return &FormatError{Format: "JSON", Err: fmt.Errorf("the top level is not an object")}
	}
	check := func(path string, array bool) error {
		ps := parents(path)
		for i := len(ps) - 1; i >= 0; i-- {
			r := gjson.GetBytes(b, ps[i])
			if !r.Exists() {
				return nil
			}
			want, ok := "an object", r.IsObject()
			if i == 0 && array {
				want, ok = "an array", r.IsArray()
			}
			if i == 0 && !array {
				return nil
			}
			if !ok {
				return &FormatError{Format: "JSON", Err: fmt.Errorf("%q is not %s", ps[i], want)}
			}
		}
		return nil
	}
	for _, s := range e.sets {
		if err := check(s.path, false); err != nil {
			return err
		}
	}
	for _, a := range e.appends {
		if err := check(a.path, true); err != nil {
			return err
		}
	}
	return nil
}

// parents returns path and each of its ancestors: "a.b.c", "a.b", "a".
func parents(path string) []string {
	var out []string
	for p := path; p != ""; {
		out = append(out, p)
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return out
}

func emptyContainer(r gjson.Result) bool {
	switch {
	case r.IsObject():
		return len(r.Map()) == 0
	case r.IsArray():
		return len(r.Array()) == 0
	}
	return false
}

func sameJSON(a, b string) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, []byte(a)) != nil || json.Compact(&cb, []byte(b)) != nil {
		return a == b
	}
	return ca.String() == cb.String()
}

func containsJSON(elems []gjson.Result, raw string) bool {
	for _, el := range elems {
		if sameJSON(el.Raw, raw) {
			return true
		}
	}
	return false
}

func indentJSON(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return b
	}
	out.WriteByte('\n')
	return out.Bytes()
}
