package hive

import (
	"path/filepath"
	"strings"
)

// SourceName is how output names a mined file at path (absolute), the
// same from every working directory and with or without the daemon: its
// path relative to h, `/`-separated, when it lies in h; with no hive
// known (h nil), from the agents/ directory holding its agent directory
// ("agents/dwight/memory.md"); otherwise path itself. The rule:
// docs/mining.md ("How output names files").
func SourceName(h *Hive, path string) string {
	if h != nil {
		if rel, ok := h.Rel(path); ok {
			return filepath.ToSlash(rel)
		}
		return path
	}
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := len(parts) - 3; i >= 1; i-- {
		if parts[i] == DefaultDir {
			return strings.Join(parts[i:], "/")
		}
	}
	return path
}
