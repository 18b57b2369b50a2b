package hive

import "strings"

// clientMemorySep separates the client and the machine in the name of a
// client's memory folder.
const clientMemorySep = "-memory."

// ClientMemoryDirName is the folder of an agent directory where an agent
// client keeps, on one machine, the memory it writes itself (Claude
// Code's auto memory, pointed there by memminer connect):
// "<client>-memory.<machine>". Each machine's client writes only its own
// folder, as remember writes only memory.<machine>.md, so Syncthing never
// holds two machines' versions of one file. client is an agent id of
// package connect ([a-z0-9-]); machine must be a NormalizeMachine name.
func ClientMemoryDirName(client, machine string) string {
	return client + clientMemorySep + machine
}

// ClientOf returns the client whose own memory a file of an agent
// directory is: rel is the file's path relative to the agent directory
// ("/"-separated), and the client is named by its first directory when
// that is a ClientMemoryDirName. Mining records the client as the agent
// of the file's notes: they are the client's, not memminer's, and
// nothing of memminer writes them.
func ClientOf(rel string) (string, bool) {
	dir, _, ok := strings.Cut(rel, "/")
	if !ok {
		return "", false
	}
	client, machine, ok := strings.Cut(dir, clientMemorySep)
	if !ok || client == "" || strings.Trim(client, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" || client[0] == '-' {
		return "", false
	}
	if m, err := NormalizeMachine(machine); err != nil || m != machine {
		return "", false
	}
	return client, true
}
