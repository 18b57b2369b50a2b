// Package daemon is memminer's long-running service: it keeps one writable
// palace open (holding its writer lock), mines the hive's agents/<id>/
// directories (and those Options.Agents globs match) into one wing each as
// they change, and answers searches, status and mine requests over a Unix
// socket in the palace directory.
//
// Changes are noticed two ways. fsnotify reports edits promptly; a burst of
// writes to one agent's files is debounced into one mine. The mine loop
// re-stats every memory file each MineInterval and mines the agents whose
// files changed since they were last mined (the palace manifest keeps each
// file's mtime and size, so a restart re-mines nothing that did not change;
// a file mined right after a write is compared by content: mine.Changed
// decides).
// When fsnotify fails or overflows the daemon falls back to the mine loop,
// never to a missed change.
//
// All mining happens in one goroutine, fed by a queue; searches run
// concurrently against the in-memory palace. A file that fails to mine is
// reported in Status and retried when it changes, or at the next tick with a
// backoff that doubles with every failure.
//
// Client talks to a running daemon and implements api.Service; what it
// sends and receives are package api's types, the ones the CLI prints. The
// handlers answer with package inproc on the daemon's open palace, the code
// the CLI runs without a daemon, so output is the same either way.
//
// Components (such as a Syncthing conflict watcher) plug into the daemon
// through the Component interface.
package daemon
