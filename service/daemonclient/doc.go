// Package daemonclient is the daemon's control socket as its callers see it: the
// client, which implements api.Service over the socket, and the protocol's
// error codes, which the daemon's handlers answer with and the client
// turns back into the sentinel and typed errors they stand for. It does not
// import the daemon: a command reaches the daemon through it, and the
// palace here through package inproc, without package daemon.
package daemonclient
