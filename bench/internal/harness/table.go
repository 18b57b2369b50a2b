package harness

import (
	"fmt"
	"io"
	"strings"
)

// Row writes cells as one row of a Markdown table: "| a | b |".
func Row(w io.Writer, cells ...string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
}

// Rule writes the line under a Markdown table's header for n columns:
// "|---|---|".
func Rule(w io.Writer, n int) {
	fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", n))
}
