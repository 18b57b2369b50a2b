// Package conflicts owns the hive's open conflicts: Syncthing conflict
// copies and files with Git conflict markers, found by the daemon's
// registry or by a scan when no daemon runs, and their merge back into
// their files. It imports neither the daemon nor api: both name its types.
//
// When two machines change the same memory file before they sync,
// Syncthing keeps one version and renames the other to
// "<name>.sync-conflict-<date>-<time>-<device><ext>". The losing version is
// never mined (see hive.IsConflictCopy), so unless someone merges it back
// the facts in it are lost. This package makes sure someone hears of it.
//
// A [Component] is the registry the daemon runs (daemon.ConflictsComponent
// plugs it in, given the daemon's [Host]). It learns of
// conflict copies three ways: at once from Syncthing's event stream (a
// syncthing.Watcher, when a client is configured and Syncthing answers);
// from a walk of the hive at start and after every hive scan of the daemon
// (the backstop when Syncthing is down, not configured, or events were
// missed); and from a walk made for every request, so that what it answers
// is what is on disk at that moment. Each open conflict ([Conflict]) records the copy, the file
// it conflicts with, the wing (the agent id of agents/<id>/…, or of a
// directory the daemon's agents globs match), when it was
// detected, the winning device and how it was found. A conflict is resolved
// when its copy disappears.
//
// The registry is persisted atomically in the palace directory
// ([RegistryFile], mode 0600), so a restarted daemon neither forgets open
// conflicts nor alerts about them again. A registry file that cannot be
// read is moved aside and rebuilt from a scan of the hive; that is logged
// once, and the conflicts the rebuild finds are not alerted again.
//
// Every new conflict is logged once at WARN level; optionally a command is
// run ([Options.Command], started directly, never through a shell, with the
// details in MEMMINER_CONFLICT_* environment variables) and a webhook is
// sent (an HTTP POST of the conflict's JSON, retried with backoff a bounded
// number of times). Alerts are delivered at most once: a daemon stopped
// while a command runs or a webhook is being retried does not repeat them.
//
// The component answers the service's open conflicts ([Component.Conflicts],
// GET /conflicts on the daemon's control socket) and their merge
// ([Component.MergeConflicts]), and counts open conflicts for status and
// metrics; each walks the hive first (only the wing's agent directories
// for ?wing), recording and alerting new copies and resolving deleted
// ones, which is what makes `memminer conflicts --check` safe to run just
// before writing. A wing that is neither an agent directory of the hive
// nor a wing of the palace is refused ([UnknownWingError]). [ScanHive] and
// [ScanWings] give the same list without a daemon, reusing the records of
// a registry file left by one.
package conflicts
