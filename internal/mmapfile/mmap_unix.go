//go:build unix

package mmapfile

import (
	"os"
	"syscall"
)

// Map maps the first size bytes of f read-only. The mapping outlives
// f; release unmaps it, and nothing may read it after.
func Map(f *os.File, size int) (data []byte, release func(), err error) {
	if size == 0 {
		return nil, func() {}, nil
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
