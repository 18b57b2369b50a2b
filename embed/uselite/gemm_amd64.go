package uselite

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAVX2 reports whether the AVX2/FMA micro-kernel runs on this CPU.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kernel6x16AVX2 is kernelGo in AVX2/FMA assembly (gemm_amd64.s); pointers
// instead of slices, strides in elements.
//
//go:noescape
func kernel6x16AVX2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

// kernel runs the fastest micro-kernel this CPU supports. The caller
// guarantees a holds 6 rows of k values at stride lda, b holds k rows of 16
// values at stride ldb and c holds 6 rows of 16 values at stride ldc.
func kernel(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if !useAVX2 || k == 0 {
		kernelGo(k, a, lda, b, ldb, c, ldc)
		return
	}
	_ = a[5*lda+k-1]
	_ = b[(k-1)*ldb+panelWidth-1]
	_ = c[5*ldc+panelWidth-1]
	kernel6x16AVX2(k, unsafe.SliceData(a), lda, unsafe.SliceData(b), ldb, unsafe.SliceData(c), ldc)
}

// setAVX2 switches the assembly kernel on or off (tests only) and returns
// a function that restores the previous setting.
func setAVX2(on bool) func() {
	old := useAVX2
	useAVX2 = on && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	return func() { useAVX2 = old }
}
