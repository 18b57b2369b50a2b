//go:build !amd64

package uselite

// useAVX2 is false off amd64: only the portable kernel exists.
const useAVX2 = false

// kernel runs the portable micro-kernel.
func kernel(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	kernelGo(k, a, lda, b, ldb, c, ldc)
}

// setAVX2 is a no-op off amd64.
func setAVX2(bool) func() { return func() {} }
