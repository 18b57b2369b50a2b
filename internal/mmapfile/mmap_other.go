//go:build !unix

package mmapfile

import (
	"os"
	"unsafe"
)

// Map reads the first size bytes of f into memory aligned to 8 bytes
// (there is no mapping on this system); release does nothing.
func Map(f *os.File, size int) (data []byte, release func(), err error) {
	words := make([]uint64, (size+7)/8)
	if size > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), size)
	}
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}
