package uselite

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useAVX2 reports whether the AVX2/FMA micro-kernel runs on this CPU.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// useAVX512 reports whether the AVX-512 micro-kernel (12×32 tiles) runs
// on this CPU; x/sys/cpu also checks that the OS saves the ZMM
// registers.
var useAVX512 = useAVX2 && cpu.X86.HasAVX512F

// kernel6x16AVX2 is kernelGo in AVX2/FMA assembly (gemm_amd64.s); pointers
// instead of slices, strides in elements.
//
//go:noescape
func kernel6x16AVX2(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

// kernel12x32AVX512 computes c[12×32] += a[12×k]·b[k×32] with b two panels
// bstep elements apart (gemm_amd64.s).
//
//go:noescape
func kernel12x32AVX512(k int, a *float32, lda int, b *float32, ldb int, bstep int, c *float32, ldc int)

//go:noescape
func addAVX2(dst, src *float32, n int)

//go:noescape
func reluAVX2(dst *float32, n int)

// kernel runs the fastest 6×16 micro-kernel this CPU supports. The caller
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

// kernelWide computes c[12×16·np] += a[12×k]·b[k×16·np] for np (1 or 2)
// panels of b, bstep elements apart. Two panels run on the AVX-512
// kernel; one panel (the odd last panel of an attention product), or any
// tile with AVX-512 off, runs on the 6×16 kernel tile by tile. Every
// element sees the same fused multiply-adds in the same order either way.
func kernelWide(np, k int, a []float32, lda int, b []float32, ldb, bstep int, c []float32, ldc int) {
	if !useAVX512 || k == 0 || np != widePanels {
		kernelWideGo(np, k, a, lda, b, ldb, bstep, c, ldc)
		return
	}
	_ = a[(wideRows-1)*lda+k-1]
	_ = b[bstep+(k-1)*ldb+panelWidth-1]
	_ = c[(wideRows-1)*ldc+2*panelWidth-1]
	kernel12x32AVX512(k, unsafe.SliceData(a), lda, unsafe.SliceData(b), ldb, bstep, unsafe.SliceData(c), ldc)
}

// addTo adds src to dst element by element.
func addTo(dst, src []float32) {
	src = src[:len(dst)]
	if !useAVX2 || len(dst) == 0 {
		addToGo(dst, src)
		return
	}
	addAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(dst))
}

// relu sets the negative elements of dst to zero.
func relu(dst []float32) {
	if !useAVX2 || len(dst) == 0 {
		reluGo(dst)
		return
	}
	reluAVX2(unsafe.SliceData(dst), len(dst))
}

// setAVX2 switches the assembly kernels on or off (tests only) and returns
// a function that restores the previous setting.
func setAVX2(on bool) func() {
	old, old512 := useAVX2, useAVX512
	useAVX2 = on && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	useAVX512 = useAVX2 && cpu.X86.HasAVX512F
	return func() { useAVX2, useAVX512 = old, old512 }
}

// setAVX512 switches the AVX-512 kernel on or off (tests only), leaving
// the AVX2 ones as they are, and returns a function that restores the
// previous setting.
func setAVX512(on bool) func() {
	old := useAVX512
	useAVX512 = on && useAVX2 && cpu.X86.HasAVX512F
	return func() { useAVX512 = old }
}
