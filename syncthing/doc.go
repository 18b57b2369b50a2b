// Package syncthing talks to a local Syncthing over its REST API and finds
// the conflict copies Syncthing leaves behind when two devices edit the same
// file before they sync.
//
// A [Client] wraps the handful of endpoints memminer needs (ping, system
// status, folder and device configuration, the event streams). A [Watcher]
// long-polls the event streams, survives Syncthing restarts and outages, and
// reports every change to a file whose name is a conflict copy
// (see [ParseConflictName]) with its absolute path, the original file and the
// device whose version won. [ScanConflicts] walks a directory tree for
// conflict copies as a backstop for events missed while nobody was watching.
//
// The API key is sent only in the X-API-Key header; it never appears in
// URLs, errors or log output.
package syncthing
