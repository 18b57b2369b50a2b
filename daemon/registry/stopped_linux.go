package registry

import (
	"bytes"
	"os"
	"strconv"
)

// processStopped reports whether the process with pid is stopped (by
// SIGSTOP or a debugger): the state in /proc/<pid>/stat is T or t.
func processStopped(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// "pid (comm) state ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return false
	}
	state := data[i+2]
	return state == 'T' || state == 't'
}
