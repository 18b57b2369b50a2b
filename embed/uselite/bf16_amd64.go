package uselite

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// tileConfig is the AMX tile configuration tileBF16x32 loads: palette 1,
// eight tiles of 16 rows × 64 bytes.
var tileConfig = func() (cfg [64]byte) {
	cfg[0] = 1
	for t := range 8 {
		cfg[16+2*t] = 64 // bytes per row, little-endian uint16
		cfg[48+t] = 16   // rows
	}
	return cfg
}()

// tilesUsable reports whether this CPU has AMX-BF16 and the kernel lets
// the process use the tile registers (asked once).
var tilesUsable = sync.OnceValue(func() bool {
	tileAsm = cpu.X86.HasAMXTile && cpu.X86.HasAMXBF16 && useAVX512 && requestTiles()
	useBF16 = tileAsm
	return tileAsm
})

// tileAsm reports whether tileBF16 runs on AMX.
var tileAsm bool

//go:noescape
func tileBF16x32(kc int, a, alo *uint16, lda int, b, blo *uint16, bstep int, c *float32, ldc int, cfg *byte)

// tileBF16 runs the tile kernel (see tileBF16Go for the arguments): on
// AMX when tileAsm holds, else in Go. The caller guarantees kc ≥ 1 and
// that the slices hold the 32×32 block.
func tileBF16(kc int, a, alo []uint16, lda int, b, blo []uint16, bstep int, c []float32, ldc int) {
	if !tileAsm {
		tileBF16Go(kc, a, alo, lda, b, blo, bstep, c, ldc)
		return
	}
	kp := kc * bf16Chunk
	_ = a[(bf16Rows-1)*lda+kp-1]
	_ = b[bstep+kp*panelWidth-1]
	_ = c[(bf16Rows-1)*ldc+bf16Panels*panelWidth-1]
	_ = alo[(bf16Rows-1)*lda+kp-1]
	_ = blo[bstep+kp*panelWidth-1]
	tileBF16x32(kc, unsafe.SliceData(a), unsafe.SliceData(alo), lda*2, unsafe.SliceData(b), unsafe.SliceData(blo), bstep*2, unsafe.SliceData(c), ldc*4, &tileConfig[0])
}

// setTiles switches the bfloat16 products on or off, on AMX or in Go
// (tests only), and returns a function that restores the previous
// setting; ok is false when asm is asked for and AMX is not usable.
func setTiles(on, asm bool) (restore func(), ok bool) {
	// Asked first, so that a model loaded later does not reset the switch.
	if !tilesUsable() && asm {
		return nil, false
	}
	old, oldAsm := useBF16, tileAsm
	useBF16, tileAsm = on, asm
	return func() { useBF16, tileAsm = old, oldAsm }, true
}

// splitAVX512 reports whether splitBF16s runs on AVX512-BF16.
var splitAVX512 = useAVX512 && cpu.X86.HasAVX512BF16

//go:noescape
func splitBF16AVX512(hi, lo *uint16, src *float32, n int)

// splitBF16s sets hi[i], lo[i] to splitBF16(src[i]) for every i of src.
func splitBF16s(hi, lo []uint16, src []float32) {
	hi, lo = hi[:len(src)], lo[:len(src)]
	body := 0
	if splitAVX512 {
		body = len(src) / 32 * 32
		if body > 0 {
			splitBF16AVX512(unsafe.SliceData(hi), unsafe.SliceData(lo), unsafe.SliceData(src), body)
		}
	}
	for i := body; i < len(src); i++ {
		hi[i], lo[i] = splitBF16(src[i])
	}
}
