// Package api is what memminer does, said once: the Service the commands
// call, and its requests, results and errors. Two implementations serve
// it: package inproc, on the palace in this process (the CLI without a
// daemon, and the daemon's own handlers), and the daemon's socket client.
// The JSON keys of these types are what `--json` prints and what the
// control socket carries; they do not change.
package api
