package hive

import (
	"path/filepath"
	"strings"
)

// PacksDir is the directory of a hive that holds its Context Packs,
// packs/<name>.md: task-scoped selections of the hive's notes. It is never
// an agent directory and never mined as an agent's memory, whatever the
// agents globs match (docs/packs.md).
const PacksDir = "packs"

// InboxFileName is the file in an agent directory that holds what the
// agent supposes but nobody approved yet: hypotheses and high-risk notes.
// It is mined, but its pending notes are unapproved (govern.Unapproved)
// and left out of recall by default (docs/remember.md, "The inbox").
const InboxFileName = "inbox.md"

// IsInboxFile reports whether name (a base name, or a path whose last
// element is tested) is an agent's inbox, in any case.
func IsInboxFile(name string) bool {
	return strings.EqualFold(filepath.Base(name), InboxFileName)
}

// SkillsDir is the directory of a hive that holds its shared skills
// (package skill, docs/skills.md): like PacksDir, never an agent
// directory and never mined as an agent's memory.
const SkillsDir = "skills"

// inPacks reports whether the directory at parts (relative to the hive)
// is packs/ or skills/, or lies in one: no agent directory is ever found
// there.
func inPacks(parts []string) bool {
	return len(parts) > 0 && (parts[0] == PacksDir || parts[0] == SkillsDir)
}
