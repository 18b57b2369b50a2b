package remember

import (
	"strconv"
	"strings"
)

// ParseRef reads a note reference as --supersedes, `memminer show` and
// MCP take it: a note id (32 hex digits) or FILE:LINE (1-based). ok is
// false for anything else.
func ParseRef(ref string) (id, file string, line int, ok bool) {
	ref = strings.TrimSpace(ref)
	if noteIDRe().MatchString(ref) {
		return ref, "", 0, true
	}
	i := strings.LastIndexByte(ref, ':')
	if i <= 0 {
		return "", "", 0, false
	}
	line, err := strconv.Atoi(ref[i+1:])
	if err != nil || line < 1 {
		return "", "", 0, false
	}
	return "", ref[:i], line, true
}
