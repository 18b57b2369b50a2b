// Package syncthing talks to a local Syncthing over its REST API and
// follows the conflict copies Syncthing leaves behind when two devices edit
// the same file before they sync.
//
// A [Client] wraps the handful of endpoints memminer needs: ping, system
// status, folder and device configuration, and the two event streams
// (/rest/events and /rest/events/disk). [FindConfig] and
// [APIKeyFromConfig] read the address and API key from Syncthing's
// config.xml in its usual places ([DefaultConfigPaths]).
//
// When two devices change a file before syncing, Syncthing keeps the
// version with the newer modification time under the original name and
// renames the other to "<stem>.sync-conflict-YYYYMMDD-HHMMSS-<short id><ext>",
// where the short id is the winning device's. hive.ParseConflictName takes
// such a name apart; [DeviceByShort] maps the short id to a configured
// device.
//
// A [Watcher] long-polls both event streams, survives Syncthing restarts
// (event ids start again at 1) and outages, and calls a handler with a
// [ConflictEvent] — absolute path, original file, winning device — whenever
// a conflict copy appears or disappears. hive.ScanConflicts walks a folder
// for conflict copies as a backstop for changes made while nobody watched.
//
// The API key is sent only in the X-API-Key header; it never appears in
// URLs, errors, String output or log lines.
package syncthing
