// Package mainstack grows the main goroutine's stack while it is shallow,
// before the other packages' inits run on it. The stack starts small and
// a command's calls would grow it to tens of KiB one doubling at a time,
// each copying every frame and looking up its stack map, which faults in
// much of the binary's tables (BENCHMARKS.md: a few tenths of a
// millisecond of a mine). One copy of a few frames costs next to nothing.
// Import it for its init, from main only.
package mainstack

func init() { grow(0) }

// grow needs a 64 KiB frame, below the compiler's 128 KiB bound on a
// variable kept on the stack (go build -gcflags=-m says it stays).
//
//go:noinline
func grow(i int) byte {
	var frame [64 << 10]byte
	frame[i] = byte(i)
	return frame[i]
}
