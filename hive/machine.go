package hive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrBadMachine is matched by the error of a name that is no machine name.
var ErrBadMachine = errors.New("not a valid machine name")

// maxMachineLen bounds a machine name.
const maxMachineLen = 48

// DefaultMachine is the machine name used when none is configured: the
// host name's first label, normalised (NormalizeMachine), or "local" when
// the host name gives none.
func DefaultMachine() string {
	h, err := os.Hostname()
	if err != nil {
		return "local"
	}
	h, _, _ = strings.Cut(h, ".")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	m, err := NormalizeMachine(strings.Trim(b.String(), "-_"))
	if err != nil {
		return "local"
	}
	return m
}

// NormalizeMachine case-folds name (the machine setting) and checks it is
// a machine name: [a-z0-9][a-z0-9_-]*, at most 48 characters. Its error
// matches ErrBadMachine.
func NormalizeMachine(name string) (string, error) {
	m := strings.ToLower(strings.TrimSpace(name))
	ok := m != "" && len(m) <= maxMachineLen
	for i := 0; ok && i < len(m); i++ {
		c := m[i]
		ok = 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || i > 0 && (c == '_' || c == '-')
	}
	if !ok {
		return "", fmt.Errorf("%w: %q: use up to %d lower-case letters, digits, '_' and '-', starting with a letter or digit", ErrBadMachine, name, maxMachineLen)
	}
	return m, nil
}

// MachineFileName is the memory file one machine appends an agent's notes
// to: "memory.<machine>.md" in the agent directory. Each machine writing
// only its own file is what keeps Syncthing from ever holding two
// machines' versions of one file (docs/several-machines.md). machine must
// be a NormalizeMachine name.
func MachineFileName(machine string) string {
	return strings.TrimSuffix(MemoryFileName, ".md") + "." + machine + ".md"
}

// MachineOf returns the machine whose memory file name (a base name, or a
// path whose last element is tested) is: "laptop" for memory.laptop.md,
// in any case; false for memory.md and every other name.
func MachineOf(name string) (string, bool) {
	name = filepath.Base(name)
	stem := strings.TrimSuffix(MemoryFileName, ".md") + "."
	if len(name) <= len(stem)+len(".md") || !strings.EqualFold(name[:len(stem)], stem) || !strings.EqualFold(name[len(name)-3:], ".md") {
		return "", false
	}
	m, err := NormalizeMachine(name[len(stem) : len(name)-3])
	if err != nil || m != strings.ToLower(name[len(stem):len(name)-3]) {
		return "", false
	}
	return m, true
}
