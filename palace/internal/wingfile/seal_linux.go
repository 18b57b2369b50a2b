package wingfile

import (
	"os"
	"syscall"
)

// SealOf returns the seal of info, false when it has none.
func SealOf(info os.FileInfo) (Seal, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Ino == 0 {
		return Seal{}, false
	}
	return Seal{Dev: st.Dev, Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, true
}
