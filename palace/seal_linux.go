package palace

import (
	"os"
	"syscall"
)

// sealOf returns the seal of info, false when it has none.
func sealOf(info os.FileInfo) (seal, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Ino == 0 {
		return seal{}, false
	}
	return seal{Dev: st.Dev, Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, true
}
