package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

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
