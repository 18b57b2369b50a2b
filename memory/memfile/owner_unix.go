//go:build unix

package memfile

import (
	"io/fs"
	"os"
	"syscall"
)

// owner is a file's user and group; known is false for a file not read.
type owner struct {
	uid, gid int
	known    bool
}

func ownerOf(info fs.FileInfo) owner {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return owner{}
	}
	return owner{uid: int(st.Uid), gid: int(st.Gid), known: true}
}

// apply gives f the owner, when it has another one: writing a file as root
// must not hand it to root.
func (o owner) apply(f *os.File) error {
	if !o.known {
		return nil
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if cur := ownerOf(info); cur.uid == o.uid && cur.gid == o.gid {
		return nil
	}
	return f.Chown(o.uid, o.gid)
}
