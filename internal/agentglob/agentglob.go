// Package agentglob decides which glob patterns may name a hive's agent
// directories. It sits below both config, which refuses a bad agents
// setting as it loads, and hive, which matches the patterns, so the two
// apply one rule without config importing hive.
package agentglob

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// Check reports why pattern cannot name agent directories, or nil: it
// must be non-empty, relative to the hive, free of ".." and hidden
// elements, and well-formed for path/filepath.Match (no ErrBadPattern).
func Check(pattern string) error {
	if strings.TrimSpace(pattern) == "" {
		return fmt.Errorf("pattern %q is empty; give a glob like bots/*", pattern)
	}
	if path.IsAbs(pattern) || filepath.IsAbs(pattern) {
		return fmt.Errorf("pattern %q is absolute; patterns are relative to the hive", pattern)
	}
	for _, e := range strings.Split(pattern, "/") {
		switch {
		case e == "..":
			return fmt.Errorf("pattern %q has a \"..\" element; patterns match directories inside the hive", pattern)
		case e != "." && strings.HasPrefix(e, "."):
			return fmt.Errorf("pattern %q names a hidden directory, and those are never agents", pattern)
		}
		if _, err := filepath.Match(e, ""); err != nil {
			return fmt.Errorf("pattern %q is malformed: %w", pattern, err)
		}
	}
	if path.Clean(pattern) == "." {
		return fmt.Errorf("pattern %q matches the hive itself, not directories inside it", pattern)
	}
	return nil
}
