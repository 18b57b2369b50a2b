package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
)

// maxResults is the most hits one search returns, and what -l and -c ask
// for unless --results says otherwise: they summarise every relevant note.
const maxResults = 1000

// searchOutput is how the search command prints its hits: text unless
// one of its flags is set.
type searchOutput struct {
	json, jsonl, files, count bool
}

// check refuses two ways of printing at once, and --explain with a way
// that has no room for the explanation.
func (o searchOutput) check(explain bool) error {
	var set []string
	for _, f := range []struct {
		on   bool
		name string
	}{{o.json, "--json"}, {o.jsonl, "--jsonl"}, {o.files, "-l/--files-with-matches"}, {o.count, "-c/--count"}} {
		if f.on {
			set = append(set, f.name)
		}
	}
	if len(set) > 1 {
		return usagef("%s and %s cannot be combined: each prints the hits its own way; choose one", set[0], set[1])
	}
	if explain && len(set) == 1 && !o.json {
		return usagef("--explain cannot be combined with %s: it explains in the text and --json output", set[0])
	}
	return nil
}

// summary reports whether the output summarises the hits (-l, -c) rather
// than listing them.
func (o searchOutput) summary() bool { return o.files || o.count }

// showsSkills reports whether the output lists the skills found: the
// text and --json do, the outputs of hits alone do not.
func (o searchOutput) showsSkills() bool { return !o.jsonl && !o.summary() }

// print writes res as o says. Only the text and --json outputs say
// "no matching notes"; the others print nothing for no hit, like grep.
func (o searchOutput) print(w io.Writer, res api.SearchResult) error {
	switch {
	case o.json:
		return writeJSON(w, res)
	case o.jsonl:
		return writeJSONLines(w, res.Results)
	case o.files:
		printFiles(w, res.Results)
	case o.count:
		printCounts(w, res.Results)
	default:
		printHits(w, res)
	}
	return nil
}

// writeJSONLines writes each hit as one line of JSON, keyed as in --json.
func writeJSONLines(w io.Writer, hits []api.Hit) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, h := range hits {
		if err := enc.Encode(h); err != nil {
			return err
		}
	}
	return nil
}

// printFiles prints each file with a hit once, in the order of its best
// hit, named as the JSON's source is; escaped like every text field, so a
// file name cannot print a second line or drive the terminal.
func printFiles(w io.Writer, hits []api.Hit) {
	seen := map[string]bool{}
	for _, h := range hits {
		if !seen[h.Source] {
			seen[h.Source] = true
			fmt.Fprintln(w, quote.Line(h.Source))
		}
	}
}

// printCounts prints WING:HITS for each wing with a hit, by wing id.
func printCounts(w io.Writer, hits []api.Hit) {
	counts := map[string]int{}
	for _, h := range hits {
		counts[h.Wing]++
	}
	for _, wing := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(w, "%s:%d\n", quote.Line(wing), counts[wing])
	}
}

// wingList is the wings of a search: a list, which an MCP client may also
// give as one string, as before there could be several.
type wingList []string

// UnmarshalJSON reads a list of wings or a single one.
func (l *wingList) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*l = wingList{one}
		return nil
	}
	return json.Unmarshal(data, (*[]string)(l))
}

// searchToolSchema is the input schema of the MCP search tool: that of
// searchArgs, with wing one id or a list. Made when an MCP server starts,
// not at every command's start-up.
var searchToolSchema = sync.OnceValue(func() *jsonschema.Schema {
	return toolInput[searchArgs](map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[wingList](): {Types: []string{"string", "array"}, Items: &jsonschema.Schema{Type: "string"}},
	})
})

// normalizeWings checks the ids given to flag and returns the wings they
// name; empty ids name none (every wing), as for a single --wing.
func normalizeWings(flag string, ids []string) ([]string, error) {
	var out []string
	for _, id := range ids {
		if id == "" {
			continue
		}
		w, err := palace.NormalizeWingID(id)
		if err != nil && strings.Contains(id, ",") {
			return nil, usagef("%s: %v; give one wing to each %s, repeated", flag, err, flag)
		}
		if err != nil {
			return nil, usagef("%s: %v", flag, err)
		}
		out = append(out, w)
	}
	return out, nil
}

// unknownWingFlag names the flag an unknown-wing error of req's search is
// about. The palace checks the searched wings before the excluded ones,
// and its error quotes the wing (palace.UnknownWingError).
func unknownWingFlag(err error, req api.SearchRequest) string {
	for _, id := range req.ExcludeWings {
		if !slices.Contains(req.Wings, id) && strings.Contains(err.Error(), strconv.Quote(id)) {
			return "--exclude-wing"
		}
	}
	return "--wing"
}
