package uselite

import (
	"math"
	"sync"
)

// On CPUs with AMX, a product by a weight matrix runs on the bfloat16
// tile unit, a 32×32 block of c per kernel call, to float32's accuracy:
// each value x of the weights and of the product's left-hand side is
// split into a high and a low bfloat16 part, hi = bf16(x) and lo =
// bf16(x − hi), which hold 16 of float32's 24 bits, and a·b is summed in
// float32 as a_hi·b_hi + a_hi·b_lo + a_lo·b_hi (a_lo·b_lo, about 2^-16
// of the product, is left out); the three products feed one accumulator
// in one kernel call (docs/model.md says what this does to the vectors).
// Attention's products, whose right-hand sides are built per sequence,
// stay in float32.
const (
	bf16Chunk  = 32 // k values per tile step: a tile row of 64 bytes
	bf16Rows   = 32 // rows of c per kernel call
	bf16Panels = 2  // panels of c per kernel call

	bf16BlocksPerJob = 2 // row blocks one parallel job computes
	bf16PairsPerJob  = 2 // panel pairs one parallel job computes
)

// bf16Matrix is a weight matrix's panels as high and low bfloat16 parts,
// in the layout of AMX's right-hand tiles: each pair of rows 2r, 2r+1 of
// a panel is one row of 64 bytes, their values interleaved column by
// column.
type bf16Matrix struct {
	kp     int      // k rounded up to bf16Chunk; the rows past k are zero
	panels int      // panels rounded up to bf16Panels; the extra one is zero
	data   []uint16 // the high parts; panel pi starts at pi·kp·panelWidth
	lo     []uint16 // the low parts, laid out as data
}

// newBF16Matrix splits p's panels into bfloat16 parts.
func newBF16Matrix(p *matrix) *bf16Matrix {
	bm := bf16Shape(p)
	bm.data = make([]uint16, bm.panels*bm.kp*panelWidth)
	bm.lo = make([]uint16, len(bm.data))
	for pi := range p.panels {
		src := p.panel(pi)
		hi, lo := bm.panel(pi), bm.loPanel(pi)
		for i := range p.k {
			row := src[i*p.ld : i*p.ld+panelWidth]
			at := i/2*2*panelWidth + i%2
			for j, v := range row {
				hi[at+2*j], lo[at+2*j] = splitBF16(v)
			}
		}
	}
	return bm
}

// bf16Of returns p's bfloat16 panels: in place from the bundle's
// "NAME#bf16" and "NAME#bf16lo" tensors (a packed file) when it has them
// in p's shape, else split from p.
func bf16Of(b *bundle, name string, p *matrix) *bf16Matrix {
	bm := bf16Shape(p)
	part := func(suffix string) []uint16 {
		t, ok := b.get(name + suffix)
		if !ok || len(t.shape) != 2 || t.shape[0] != p.k || t.shape[1] != p.n {
			return nil
		}
		if data, _ := fromFloats[uint16](t.data); len(data) == bm.panels*bm.kp*panelWidth {
			return data
		}
		return nil
	}
	if hi, lo := part(bf16Suffix), part(bf16LoSuffix); hi != nil && lo != nil {
		bm.data, bm.lo = hi, lo
		return bm
	}
	return newBF16Matrix(p)
}

// bf16Shape is the bfloat16 form of p without its data.
func bf16Shape(p *matrix) *bf16Matrix {
	return &bf16Matrix{
		kp:     (p.k + bf16Chunk - 1) / bf16Chunk * bf16Chunk,
		panels: (p.panels + bf16Panels - 1) / bf16Panels * bf16Panels,
	}
}

// panel returns the high parts of panel pi.
func (bm *bf16Matrix) panel(pi int) []uint16 {
	return bm.data[pi*bm.kp*panelWidth : (pi+1)*bm.kp*panelWidth]
}

// loPanel returns the low parts of panel pi.
func (bm *bf16Matrix) loPanel(pi int) []uint16 {
	return bm.lo[pi*bm.kp*panelWidth : (pi+1)*bm.kp*panelWidth]
}

// toBF16 rounds v to the nearest bfloat16, ties to even, as AVX512-BF16
// does: a denormal becomes a zero of its sign, a NaN stays a NaN.
func toBF16(v float32) uint16 {
	u := math.Float32bits(v)
	switch abs := u & 0x7fffffff; {
	case abs > 0x7f800000:
		return uint16(u>>16) | 0x40
	case abs < 0x00800000:
		return uint16(u>>16) & 0x8000
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// splitBF16 splits v into bfloat16 parts: hi = toBF16(v) and lo =
// toBF16(v − hi), the subtraction exact in float32; lo is zero when hi is
// not finite (an infinity, a NaN, or a value rounded up to infinity),
// which keeps hi + lo what hi alone is.
func splitBF16(v float32) (hi, lo uint16) {
	hi = toBF16(v)
	if hi&0x7f80 == 0x7f80 {
		return hi, 0
	}
	return hi, toBF16(v - fromBF16(hi))
}

// fromBF16 is the float32 value of a bfloat16.
func fromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// useBF16 reports whether products by weight matrices that have bfloat16
// panels run on the tile kernel; the first tilesUsable sets it where AMX
// is usable.
var useBF16 bool

// bf16Pool holds the split left-hand sides of products.
var bf16Pool = sync.Pool{New: func() any { return new([]uint16) }}

// matmulBF16 is matmul on the tile kernel: c += a·b with e's bias and
// rectification, a split into bfloat16 parts and b's parts read from b.bf.
func matmulBF16(c, a []float32, m int, b *matrix, e epilogue) {
	bm := b.bf
	k, n, kp := b.k, b.n, bm.kp
	blocks := (m + bf16Rows - 1) / bf16Rows
	size := blocks * bf16Rows * kp
	buf := bf16Pool.Get().(*[]uint16)
	defer bf16Pool.Put(buf)
	if cap(*buf) < 2*size {
		*buf = make([]uint16, 2*size)
	}
	ab, alo := (*buf)[:size], (*buf)[size:2*size]
	parallelFor(blocks, func(blk int, _ *scratch) {
		for r := blk * bf16Rows; r < (blk+1)*bf16Rows; r++ {
			hi, lo := ab[r*kp:(r+1)*kp], alo[r*kp:(r+1)*kp]
			if r >= m {
				clear(hi)
				clear(lo)
				continue
			}
			splitBF16s(hi[:k], lo[:k], a[r*k:(r+1)*k])
			clear(hi[k:])
			clear(lo[k:])
		}
	})
	pairs := bm.panels / bf16Panels
	rowJobs := (blocks + bf16BlocksPerJob - 1) / bf16BlocksPerJob
	pairJobs := (pairs + bf16PairsPerJob - 1) / bf16PairsPerJob
	const tw = bf16Panels * panelWidth
	parallelFor(rowJobs*pairJobs, func(job int, s *scratch) {
		b0 := (job / pairJobs) * bf16BlocksPerJob
		b1 := min(blocks, b0+bf16BlocksPerJob)
		q0 := (job % pairJobs) * bf16PairsPerJob
		q1 := min(pairs, q0+bf16PairsPerJob)
		r0, r1 := b0*bf16Rows, min(m, b1*bf16Rows)
		c0, c1 := q0*tw, min(n, q1*tw)
		e.begin(c, n, r0, r1, c0, c1)
		for q := q0; q < q1; q++ {
			bp, bplo := bm.data[q*bf16Panels*kp*panelWidth:], bm.lo[q*bf16Panels*kp*panelWidth:]
			cq := q * tw
			cw := min(tw, n-cq)
			for blk := b0; blk < b1; blk++ {
				r := blk * bf16Rows
				rows := min(bf16Rows, m-r)
				ap, aplo := ab[r*kp:], alo[r*kp:]
				if rows == bf16Rows && cw == tw {
					tileBF16(kp/bf16Chunk, ap, aplo, kp, bp, bplo, kp*panelWidth, c[r*n+cq:], n)
					continue
				}
				// Edge block: compute it in a full-size copy.
				tile := s.bf16Tile[:]
				clear(tile)
				for i := range rows {
					copy(tile[i*tw:i*tw+cw], c[(r+i)*n+cq:(r+i)*n+cq+cw])
				}
				tileBF16(kp/bf16Chunk, ap, aplo, kp, bp, bplo, kp*panelWidth, tile, tw)
				for i := range rows {
					copy(c[(r+i)*n+cq:(r+i)*n+cq+cw], tile[i*tw:i*tw+cw])
				}
			}
		}
		e.end(c, n, r0, r1, c0, c1)
	})
}

// tileBF16Go is the portable tile kernel: c[32×32] += a[32×32·kc] ·
// b[32·kc×32] as the sum of bfloat16 products a_hi·b_hi + a_hi·b_lo +
// a_lo·b_hi, a's parts rows lda apart, b's two panels (pair rows
// interleaved) bstep apart, c rows ldc apart; strides in elements. Each
// element adds the products (exact in float32) in order of k, rounding after each; the
// tile unit sums a chunk more precisely and in another order, so the two
// agree to float32 rounding, not bit for bit.
func tileBF16Go(kc int, a, alo []uint16, lda int, b, blo []uint16, bstep int, c []float32, ldc int) {
	kp := kc * bf16Chunk
	for i := range bf16Rows {
		arow, alrow := a[i*lda:i*lda+kp], alo[i*lda:i*lda+kp]
		for p := range bf16Panels {
			panel, lpanel := b[p*bstep:p*bstep+kp*panelWidth], blo[p*bstep:p*bstep+kp*panelWidth]
			crow := c[i*ldc+p*panelWidth : i*ldc+(p+1)*panelWidth]
			for j := range crow {
				acc := crow[j]
				for kk := range kp {
					at := kk/2*2*panelWidth + 2*j + kk%2
					ah, bh := fromBF16(arow[kk]), fromBF16(panel[at])
					acc += ah * fromBF16(lpanel[at])
					acc += ah * bh
					acc += fromBF16(alrow[kk]) * bh
				}
				crow[j] = acc
			}
		}
	}
}
