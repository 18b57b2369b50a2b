//go:build linux

package daemon

import "syscall"

// statOf stats path, following links. It calls stat(2) itself: os.Stat
// allocates a FileInfo per call, and a tick makes one call per file.
func statOf(path string) (statKey, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return statKey{}, false
	}
	return statKey{
		dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mode: uint32(st.Mode),
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
	}, true
}
