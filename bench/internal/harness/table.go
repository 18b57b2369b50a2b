package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Decode reads a data set embedded in a bench (queries, targets) from
// its JSON; name is the file it came from, for the error.
func Decode[T any](name string, data []byte) (T, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return v, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// JSONLines writes each of rows as one line of JSON, for scripts.
func JSONLines[T any](w io.Writer, rows []T) error {
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// Row writes cells as one row of a Markdown table: "| a | b |".
func Row(w io.Writer, cells ...string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
}

// Rule writes the line under a Markdown table's header for n columns:
// "|---|---|".
func Rule(w io.Writer, n int) {
	fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", n))
}
