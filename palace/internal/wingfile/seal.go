package wingfile

import (
	"os"
)

// A Seal is what the writer records in the manifest of a wing file it
// wrote, or checked whole, when it writes the manifest: the file's device,
// inode, size, modification and change times. A wing file whose stat
// matches its seal is the file its writer checked, byte for byte: anything
// that writes to it, or renames another file in its place, changes its
// inode or its change time, which no one but the kernel sets. Such a file
// is not checked again at open (its CRCs, and the ranges of its arrays), so
// opening the palace touches only the pages a command reads; a file whose
// stat differs is checked whole, as before, and rebuilt from markdown if it
// is damaged. What a seal does not catch is the storage losing bits under
// an unchanged file, which the checksums read at a hit (the notes' fields
// and texts) still do.
type Seal struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime_ns"`
	Ctime int64  `json:"ctime_ns"`
}

// Matches reports whether info is the file s was taken of.
func (s *Seal) Matches(info os.FileInfo) bool {
	if s == nil {
		return false
	}
	got, ok := SealOf(info)
	return ok && got == *s
}

// SealFile returns the seal of the file at path, nil if it has none (the
// system does not tell its inode and change time).
func SealFile(path string) *Seal {
	info, err := os.Stat(path)
	if err != nil {
		return nil
	}
	s, ok := SealOf(info)
	if !ok {
		return nil
	}
	return &s
}
