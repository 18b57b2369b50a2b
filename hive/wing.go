package hive

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadWingID is matched by the error of a name that is no wing id.
var ErrBadWingID = errors.New("not a valid wing id")

// maxWingIDLen bounds a wing id.
const maxWingIDLen = 64

// wingIDChars reports whether w matches [a-z0-9][a-z0-9._-]*. A loop,
// not a regexp: a regexp compiled at package initialisation costs every
// command's start-up.
func wingIDChars(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '-')) {
			return false
		}
	}
	return w != ""
}

// NormalizeWingID case-folds id (an agent directory's name, or a wing
// named by a user) and checks it is a valid wing id:
// [a-z0-9][a-z0-9._-]*, at most 64 characters, never "." or "..". Its
// error matches ErrBadWingID.
func NormalizeWingID(id string) (string, error) {
	w := strings.ToLower(strings.TrimSpace(id))
	switch {
	case w == "":
		return "", &wingIDError{"wing id is empty"}
	case len(w) > maxWingIDLen:
		return "", &wingIDError{fmt.Sprintf("wing id %q is longer than %d characters", id, maxWingIDLen)}
	case !wingIDChars(w) || strings.Contains(w, ".."):
		return "", &wingIDError{fmt.Sprintf("wing id %q is not valid: use lower-case letters, digits, '.', '_' and '-', starting with a letter or digit", id)}
	}
	return w, nil
}

// wingIDError is ErrBadWingID with the reason.
type wingIDError struct{ msg string }

func (e *wingIDError) Error() string        { return e.msg }
func (e *wingIDError) Is(target error) bool { return target == ErrBadWingID }
