//go:build !amd64

package uselite

// tilesUsable is false off amd64: there is no tile kernel.
func tilesUsable() bool { return false }

// tileBF16 runs the portable tile kernel.
func tileBF16(kc int, a, alo []uint16, lda int, b, blo []uint16, bstep int, c []float32, ldc int) {
	tileBF16Go(kc, a, alo, lda, b, blo, bstep, c, ldc)
}

// setTiles switches the bfloat16 products on or off in Go (tests only);
// ok is false when AMX is asked for.
func setTiles(on, asm bool) (restore func(), ok bool) {
	if asm {
		return nil, false
	}
	old := useBF16
	useBF16 = on
	return func() { useBF16 = old }, true
}

// splitBF16s sets hi[i], lo[i] to splitBF16(src[i]) for every i of src.
func splitBF16s(hi, lo []uint16, src []float32) {
	hi, lo = hi[:len(src)], lo[:len(src)]
	for i, v := range src {
		hi[i], lo[i] = splitBF16(v)
	}
}
