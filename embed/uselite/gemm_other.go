//go:build !amd64

package uselite

// useAVX2 and useAVX512 are false off amd64: only the portable kernel
// exists.
const (
	useAVX2   = false
	useAVX512 = false
)

// kernel runs the portable micro-kernel.
func kernel(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	kernelGo(k, a, lda, b, ldb, c, ldc)
}

// kernelWide runs the portable micro-kernel over a 12×16·np tile.
func kernelWide(np, k int, a []float32, lda int, b []float32, ldb, bstep int, c []float32, ldc int) {
	kernelWideGo(np, k, a, lda, b, ldb, bstep, c, ldc)
}

// addTo adds src to dst element by element.
func addTo(dst, src []float32) { addToGo(dst, src) }

// relu sets the negative elements of dst to zero.
func relu(dst []float32) { reluGo(dst) }

// setAVX2 is a no-op off amd64.
func setAVX2(bool) func() { return func() {} }

// setAVX512 is a no-op off amd64.
func setAVX512(bool) func() { return func() {} }
