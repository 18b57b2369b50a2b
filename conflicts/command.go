package conflicts

import (
	"errors"
	"fmt"
	"strings"
)

// SplitCommand splits the text of --on-conflict into a program and its
// arguments the way a POSIX shell splits words, and does nothing else: no
// variables, command substitution, globs, "~" or redirections. Words are
// separated by blanks; single quotes keep everything literally; inside
// double quotes a backslash escapes only `"`, `\`, `$` and "`"; outside
// quotes a backslash escapes any character. So
//
//	notify-send "memory conflict" --urgency=critical
//
// runs notify-send with two arguments, and a `$(…)` in the text is passed
// on as it stands. The conflict's details reach the command only through
// environment variables, never through its command line.
func SplitCommand(s string) ([]string, error) {
	var (
		args    []string
		cur     strings.Builder
		inWord  bool
		quote   rune // 0, '\'' or '"'
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			if quote == '"' && !strings.ContainsRune("\"\\$`", r) {
				cur.WriteRune('\\')
			}
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	switch {
	case escaped:
		return nil, fmt.Errorf("command %q ends with a lone backslash", s)
	case quote != 0:
		return nil, fmt.Errorf("command %q has an unterminated %c quote", s, quote)
	}
	if inWord {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, errors.New("command is empty")
	}
	return args, nil
}
