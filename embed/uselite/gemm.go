package uselite

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Matrix products c += a·b run a micro-kernel that keeps a tileRows ×
// panelWidth block of c in registers while it walks down a panel of
// panelWidth columns of b. Weight matrices are copied once into
// contiguous, zero-padded panels (reading them in place, one row of a panel
// per page-sized stride, measured about 20% slower); small right-hand
// sides built during attention may be read in place.
//
// On CPUs with AVX-512 the kernel's tile is wideRows × two panels instead:
// 24 of the 32 ZMM registers hold it, so each value of b loaded feeds
// twelve multiply-adds and each value of a broadcast feeds two, about
// twice the work per instruction of the 6×16 AVX2 tile.
const (
	panelWidth = 16
	tileRows   = 6
	wideRows   = 12
	widePanels = 2
)

// matrix is the right-hand side of a product: k×n, read by panels.
type matrix struct {
	k, n   int
	panels int
	data   []float32
	// ld is the distance between rows of a panel in data; step is the
	// distance between the starts of consecutive panels.
	ld, step int
	// bf is the same panels in bfloat16, for the tile kernel; nil where
	// the product stays in float32.
	bf *bf16Matrix
}

// newMatrix packs w (k×n, row-major) into panels.
func newMatrix(w []float32, k, n int) *matrix {
	p := &matrix{}
	packStrided(p, w, k, n, n, 1)
	return p
}

// packStrided packs the k×n matrix whose element (i, j) is
// src[i*rowStride+j*colStride] into zero-padded panels, reusing p's
// storage.
func packStrided(p *matrix, src []float32, k, n, rowStride, colStride int) {
	p.k, p.n, p.panels = k, n, (n+panelWidth-1)/panelWidth
	p.ld, p.step = panelWidth, k*panelWidth
	clear(grow(&p.data, p.panels*k*panelWidth))
	for pi := range p.panels {
		dst := p.data[pi*p.step:]
		c0 := pi * panelWidth
		w0 := min(panelWidth, n-c0)
		for i := range k {
			row := dst[i*panelWidth : i*panelWidth+w0]
			base := i*rowStride + c0*colStride
			if colStride == 1 {
				copy(row, src[base:base+w0])
				continue
			}
			for j := range row {
				row[j] = src[base+j*colStride]
			}
		}
	}
}

// panel returns the data of panel pi, rows p.ld apart.
func (p *matrix) panel(pi int) []float32 {
	return p.data[pi*p.step:]
}

// rowsPerJob is how many rows of the result one parallel job computes; a
// multiple of tileRows and wideRows.
const rowsPerJob = 8 * tileRows

// panelsPerJob is how many panels (of panelWidth columns) one job covers;
// a multiple of widePanels.
const panelsPerJob = 4

// matmulAdd computes c += a·b where a is m×b.k (row-major, stride b.k) and
// c is m×b.n (row-major, stride b.n). It spreads the work over GOMAXPROCS
// goroutines.
func matmulAdd(c, a []float32, m int, b *matrix) {
	matmul(c, a, m, b, epilogue{})
}

// epilogue is row-wise work a product does on each block of c it owns, so
// that the work runs in parallel with the product instead of in serial
// passes over the whole result before or after it.
type epilogue struct {
	// bias (b.n values) goes into every row of c before the product:
	// copied over it when setBias is true, added to it otherwise.
	bias    []float32
	setBias bool
	// relu clamps the results at zero after the product.
	relu bool
}

// matmul computes c += a·b like matmulAdd, with the bias and
// rectification of e applied to each block of c by the job that computes
// it. Every element sees the same operations in the same order as with
// separate passes, so the results are bit-identical to them.
func matmul(c, a []float32, m int, b *matrix, e epilogue) {
	if m == 0 || b.n == 0 {
		return
	}
	_ = a[m*b.k-1]
	_ = c[m*b.n-1]
	if e.bias != nil {
		_ = e.bias[b.n-1]
	}
	if useBF16 && b.bf != nil {
		matmulBF16(c, a, m, b, e)
		return
	}
	rowJobs := (m + rowsPerJob - 1) / rowsPerJob
	panelJobs := (b.panels + panelsPerJob - 1) / panelsPerJob
	parallelFor(rowJobs*panelJobs, func(job int, s *scratch) {
		r0 := (job / panelJobs) * rowsPerJob
		r1 := min(m, r0+rowsPerJob)
		p0 := (job % panelJobs) * panelsPerJob
		p1 := min(b.panels, p0+panelsPerJob)
		c0, c1 := p0*panelWidth, min(b.n, p1*panelWidth)
		e.begin(c, b.n, r0, r1, c0, c1)
		gemmBlock(c, b.n, a, b.k, r0, r1, b, p0, p1, s)
		e.end(c, b.n, r0, r1, c0, c1)
	})
}

// begin applies e's bias to rows r0..r1, columns c0..c1 of c (row stride
// ldc), before the product.
func (e epilogue) begin(c []float32, ldc, r0, r1, c0, c1 int) {
	if e.bias == nil {
		return
	}
	bias := e.bias[c0:c1]
	for r := r0; r < r1; r++ {
		row := c[r*ldc+c0 : r*ldc+c1]
		if e.setBias {
			copy(row, bias)
			continue
		}
		addTo(row, bias)
	}
}

// end applies e's rectification to the block begin covered, after the
// product.
func (e epilogue) end(c []float32, ldc, r0, r1, c0, c1 int) {
	if !e.relu {
		return
	}
	for r := r0; r < r1; r++ {
		relu(c[r*ldc+c0 : r*ldc+c1])
	}
}

// gemmBlock computes rows r0..r1 and panels p0..p1 of c += a·b on the
// calling goroutine; a and c have row strides lda and ldc.
func gemmBlock(c []float32, ldc int, a []float32, lda int, r0, r1 int, b *matrix, p0, p1 int, s *scratch) {
	t := narrowTiles
	if useAVX512 {
		t = wideTiles
	}
	t.gemm(c, ldc, a, lda, r0, r1, b, p0, p1, s)
}

// tiling is a micro-kernel and the tile it computes: rows rows of c by up
// to panels panels. kern computes the tile for np ≤ panels panels of b,
// bstep elements apart.
type tiling struct {
	rows, panels int
	kern         func(np, k int, a []float32, lda int, b []float32, ldb, bstep int, c []float32, ldc int)
}

var (
	// narrowTiles runs the 6×16 kernel (AVX2 or portable).
	narrowTiles = tiling{rows: tileRows, panels: 1, kern: func(_, k int, a []float32, lda int, b []float32, ldb, _ int, c []float32, ldc int) {
		kernel(k, a, lda, b, ldb, c, ldc)
	}}
	// wideTiles runs kernelWide.
	wideTiles = tiling{rows: wideRows, panels: widePanels, kern: kernelWide}
)

// gemm is gemmBlock in t's tiles.
func (t tiling) gemm(c []float32, ldc int, a []float32, lda int, r0, r1 int, b *matrix, p0, p1 int, s *scratch) {
	tw := t.panels * panelWidth
	k, n := b.k, b.n
	var tailA []float32
	tile := s.tile[:t.rows*tw]
	for pi := p0; pi < p1; {
		np := min(t.panels, p1-pi)
		bp := b.panel(pi)
		c0 := pi * panelWidth
		cw := min(np*panelWidth, n-c0)
		for r := r0; r < r1; r += t.rows {
			rows := min(t.rows, r1-r)
			if rows == t.rows && cw == np*panelWidth {
				t.kern(np, k, a[r*lda:], lda, bp, b.ld, b.step, c[r*ldc+c0:], ldc)
				continue
			}
			// Edge tile: run the full-size kernel on zero-padded copies.
			src, srcStride := a[r*lda:], lda
			if rows < t.rows {
				if tailA == nil {
					tailA = grow(&s.tailA, t.rows*k)
					clear(tailA)
					for i := range rows {
						copy(tailA[i*k:(i+1)*k], a[(r+i)*lda:(r+i)*lda+k])
					}
				}
				src, srcStride = tailA, k
			}
			clear(tile)
			for i := range rows {
				copy(tile[i*tw:i*tw+cw], c[(r+i)*ldc+c0:(r+i)*ldc+c0+cw])
			}
			t.kern(np, k, src, srcStride, bp, b.ld, b.step, tile, tw)
			for i := range rows {
				copy(c[(r+i)*ldc+c0:(r+i)*ldc+c0+cw], tile[i*tw:i*tw+cw])
			}
		}
		pi += np
	}
}

// kernelWideGo is kernelWide on the 6×16 kernel, tile by tile.
func kernelWideGo(np, k int, a []float32, lda int, b []float32, ldb, bstep int, c []float32, ldc int) {
	for p := range np {
		for h := 0; h < wideRows; h += tileRows {
			kernel(k, a[h*lda:], lda, b[p*bstep:], ldb, c[h*ldc+p*panelWidth:], ldc)
		}
	}
}

// addToGo is the portable addTo.
func addToGo(dst, src []float32) {
	src = src[:len(dst)]
	for j, v := range src {
		dst[j] += v
	}
}

// reluGo is the portable relu.
func reluGo(dst []float32) {
	for j, v := range dst {
		if v < 0 {
			dst[j] = 0
		}
	}
}

// kernelGo is the portable micro-kernel: c[6×16] += a[6×k]·b[k×16], with
// row strides lda, ldb and ldc.
func kernelGo(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	var acc [tileRows][panelWidth]float32
	for i := range tileRows {
		copy(acc[i][:], c[i*ldc:i*ldc+panelWidth])
	}
	for kk := range k {
		bp := (*[panelWidth]float32)(b[kk*ldb : kk*ldb+panelWidth])
		for i := range tileRows {
			av := a[i*lda+kk]
			row := &acc[i]
			for j := range panelWidth {
				row[j] += av * bp[j]
			}
		}
	}
	for i := range tileRows {
		copy(c[i*ldc:i*ldc+panelWidth], acc[i][:])
	}
}

// scratch is per-goroutine working memory of parallel jobs.
type scratch struct {
	tile [wideRows * widePanels * panelWidth]float32 // edge tiles, the largest kernel's size
	// bf16Tile is an edge block of the tile kernel.
	bf16Tile [bf16Rows * bf16Panels * panelWidth]float32
	tailA    []float32
	scores   []float32
	keys     matrix
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// grow returns (*b)[:size], reallocating when the capacity is short.
func grow(b *[]float32, size int) []float32 {
	if cap(*b) < size {
		*b = make([]float32, size)
	}
	*b = (*b)[:size]
	return *b
}

// parallelFor runs fn(0..n-1) on up to GOMAXPROCS goroutines, each with
// its own scratch memory.
func parallelFor(n int, fn func(i int, s *scratch)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		s := scratchPool.Get().(*scratch)
		defer scratchPool.Put(s)
		for i := range n {
			fn(i, s)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			s := scratchPool.Get().(*scratch)
			defer scratchPool.Put(s)
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i, s)
			}
		})
	}
	wg.Wait()
}
