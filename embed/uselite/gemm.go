package uselite

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Matrix products use a packed right-hand side: the weight matrix W[k×n]
// is cut into panels of panelWidth columns, each stored k rows deep and
// contiguous, so a micro-kernel streams one panel while it keeps a
// tileRows×panelWidth block of the result in registers.
const (
	panelWidth = 16
	tileRows   = 6
)

// packed is a weight matrix in panel layout.
type packed struct {
	k, n   int
	panels int
	data   []float32 // panels × k × panelWidth, zero-padded past n
}

// pack copies w (k×n, row-major) into panel layout.
func pack(w []float32, k, n int) *packed {
	p := &packed{k: k, n: n, panels: (n + panelWidth - 1) / panelWidth}
	p.data = make([]float32, p.panels*k*panelWidth)
	for pi := range p.panels {
		dst := p.data[pi*k*panelWidth:]
		c0 := pi * panelWidth
		w0 := min(panelWidth, n-c0)
		for r := range k {
			copy(dst[r*panelWidth:r*panelWidth+w0], w[r*n+c0:r*n+c0+w0])
		}
	}
	return p
}

// panel returns the data of panel pi.
func (p *packed) panel(pi int) []float32 {
	return p.data[pi*p.k*panelWidth : (pi+1)*p.k*panelWidth]
}

// rowsPerJob is how many rows of the result one parallel job computes; a
// multiple of tileRows.
const rowsPerJob = 8 * tileRows

// panelsPerJob is how many panels (of panelWidth columns) one job covers.
const panelsPerJob = 4

// matmulAdd computes c += a·b where a is m×b.k (row-major, stride b.k) and
// c is m×b.n (row-major, stride b.n). It spreads the work over all CPUs.
func matmulAdd(c, a []float32, m int, b *packed) {
	if m == 0 || b.n == 0 {
		return
	}
	_ = a[m*b.k-1]
	_ = c[m*b.n-1]
	rowJobs := (m + rowsPerJob - 1) / rowsPerJob
	panelJobs := (b.panels + panelsPerJob - 1) / panelsPerJob
	parallelFor(rowJobs*panelJobs, func(job int) {
		r0 := (job / panelJobs) * rowsPerJob
		p0 := (job % panelJobs) * panelsPerJob
		gemmBlock(c, b.n, a, b.k, r0, min(m, r0+rowsPerJob), b, p0, min(b.panels, p0+panelsPerJob))
	})
}

// gemmBlock computes rows r0..r1 and panels p0..p1 of c += a·b on the
// calling goroutine; a and c have row strides lda and ldc.
func gemmBlock(c []float32, ldc int, a []float32, lda int, r0, r1 int, b *packed, p0, p1 int) {
	k, n := b.k, b.n
	var tailA []float32
	var tile [tileRows * panelWidth]float32
	for pi := p0; pi < p1; pi++ {
		bp := b.panel(pi)
		c0 := pi * panelWidth
		cw := min(panelWidth, n-c0)
		for r := r0; r < r1; r += tileRows {
			rows := min(tileRows, r1-r)
			if rows == tileRows && cw == panelWidth {
				kernel(k, a[r*lda:], lda, bp, c[r*ldc+c0:], ldc)
				continue
			}
			// Edge tile: run the full-size kernel on zero-padded copies.
			src, srcStride := a[r*lda:], lda
			if rows < tileRows {
				if tailA == nil {
					tailA = make([]float32, tileRows*k)
					for i := range rows {
						copy(tailA[i*k:(i+1)*k], a[(r+i)*lda:(r+i)*lda+k])
					}
				}
				src, srcStride = tailA, k
			}
			clear(tile[:])
			for i := range rows {
				copy(tile[i*panelWidth:i*panelWidth+cw], c[(r+i)*ldc+c0:(r+i)*ldc+c0+cw])
			}
			kernel(k, src, srcStride, bp, tile[:], panelWidth)
			for i := range rows {
				copy(c[(r+i)*ldc+c0:(r+i)*ldc+c0+cw], tile[i*panelWidth:i*panelWidth+cw])
			}
		}
	}
}

// packStrided packs the k×n matrix whose element (i, j) is
// src[i*rowStride+j*colStride] into p, reusing p's storage.
func packStrided(p *packed, src []float32, k, n, rowStride, colStride int) {
	p.k, p.n, p.panels = k, n, (n+panelWidth-1)/panelWidth
	size := p.panels * k * panelWidth
	if cap(p.data) < size {
		p.data = make([]float32, size)
	}
	p.data = p.data[:size]
	clear(p.data)
	for pi := range p.panels {
		dst := p.data[pi*k*panelWidth:]
		c0 := pi * panelWidth
		w0 := min(panelWidth, n-c0)
		for i := range k {
			row := dst[i*panelWidth : i*panelWidth+w0]
			base := i*rowStride + c0*colStride
			for j := range row {
				row[j] = src[base+j*colStride]
			}
		}
	}
}

// kernelGo is the portable micro-kernel: c[6×16] += a[6×k]·b[k×16], with
// row strides lda and ldc and b a packed panel.
func kernelGo(k int, a []float32, lda int, b []float32, c []float32, ldc int) {
	var acc [tileRows][panelWidth]float32
	for i := range tileRows {
		copy(acc[i][:], c[i*ldc:i*ldc+panelWidth])
	}
	for kk := range k {
		bp := (*[panelWidth]float32)(b[kk*panelWidth : kk*panelWidth+panelWidth])
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

// parallelFor runs fn(0..n-1) on up to GOMAXPROCS goroutines.
func parallelFor(n int, fn func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}
