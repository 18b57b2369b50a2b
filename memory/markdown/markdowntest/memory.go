// Package markdowntest builds markdown memory files for the tests and
// benchmarks of the parser and of mining.
package markdowntest

import (
	"fmt"
	"strings"
)

// Memory builds a realistic memory file of about n lines: frontmatter,
// sections of bullets (some nested, some with code or checkboxes),
// paragraphs, a table now and then.
func Memory(n int) []byte {
	bullets := []string{
		"Prefers short answers; explain trade-offs only when asked.",
		"The CI runner is Debian; `apt-get update` must run before installs.",
		"Syncthing conflict copies look like `memory.sync-conflict-20250101-101010-ABCDEFG.md`.",
		"[ ] Benchmark hybrid search on LoCoMo with the built-in model.",
		"[x] Move the palace lock to gofrs/flock.",
		"Never `git stash` in the shared work tree; commit only your own paths.",
		"Café Zürich meeting notes: 周三 review 🚀 moved to Thursday.",
	}
	var b strings.Builder
	b.WriteString("---\nagent: bench\nversion: 7\ntags: [memory, bench]\n---\n# Memory — bench\n\n")
	for s := 0; strings.Count(b.String(), "\n") < n; s++ {
		fmt.Fprintf(&b, "## Topic %d\n\n", s)
		for i := range 8 {
			fmt.Fprintf(&b, "- %s (%d.%d)\n", bullets[(s+i)%len(bullets)], s, i)
			if i%3 == 0 {
				b.WriteString("  - nested detail with a `code span` and a [link](https://example.invalid/x)\n  - another nested detail\n")
			}
		}
		b.WriteString("\nBuild and check with:\n\n```sh\ngo build ./...\ngo vet ./...\n```\n\n")
		if s%2 == 0 {
			b.WriteString("### Decision log\n\n")
			for i := range 6 {
				fmt.Fprintf(&b, "Decided on day %d that the mine loop re-reads a file only when its mtime or size changed. "+
					"This keeps the 3-minute loop cheap. A full rebuild is still possible with `memminer mine --all`.\n\n", i)
			}
		}
		if s%3 == 0 {
			b.WriteString("| service | port | owner |\n|---|---:|---|\n| syncthing | 8384 | ops |\n| memminer | 7777 | hive |\n\n")
		}
		if s%4 == 0 {
			b.WriteString("> Quote from the user: keep markdown the source of truth.\n> The palace is derived data.\n\n")
			b.WriteString(strings.Repeat("A long paragraph keeps going with details about the deploy, the rollback and the checks that follow. ", 8) + "\n\n")
		}
	}
	return []byte(b.String())
}
