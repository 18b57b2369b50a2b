// Package hive owns the rules of a hive: which of its directories are
// agents, which wing any path belongs to, and which file names are
// memory, hidden or Syncthing conflict copies. Mining, the daemon and its
// watcher, the conflict watcher and status all ask it, so they agree.
//
// The rules themselves are written out once, for users, in
// docs/mining.md ("Agent directories" and "What is mined"). Here they are
// decided: Globs (the agents globs, checked by internal/agentglob, which
// config shares), Hive.Agents (which matched
// directories are agents, and why the others are not: BadName, SameWing,
// Nested, OutsideHive, Aliased), Hive.Locate (the wing of any path),
// MinedAsHive (whether a directory given to mine is a hive), Hive.Check
// (a directory that is no hive), NormalizeWingID (wing ids), IsHidden and
// IsMemoryFile (what is mined), MachineFileName and IsMainMemoryFile (the
// memory file each machine appends to, memory.<machine>.md, beside an
// older memory.md), ClientMemoryDirName and ClientOf (the folder where a
// client keeps its own memory on one machine, and whose notes are the
// client's), PacksDir and SkillsDir (never agents: the hive's Context
// Packs and shared skills),
// IsInboxFile (an agent's inbox), and ParseConflictName, the one parser of
// conflict-copy names: what it recognises is exactly what mine skips and
// the conflict watcher reports.
package hive
