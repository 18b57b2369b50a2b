package uselite

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// naiveMatmul returns a·w for row-major a (m×k) and w (k×n).
func naiveMatmul(a, w []float32, m, k, n int) []float32 {
	out := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for kk := range k {
				s += float64(a[i*k+kk]) * float64(w[kk*n+j])
			}
			out[i*n+j] = float32(s)
		}
	}
	return out
}

func randomMatrix(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = r.Float32()*2 - 1
	}
	return out
}

// kernelSets are the kernels a product can run on: the portable one, the
// AVX2 6×16 one, the AVX-512 12×32 one and the bfloat16 tiles of AMX,
// each where the CPU has it. Only matrices with bfloat16 panels (the
// model's weights) run on the tiles.
var kernelSets = []struct {
	name               string
	avx2, avx512, bf16 bool
}{{"portable", false, false, false}, {"avx2", true, false, false}, {"avx512", true, true, false}, {"bf16", true, true, true}}

// useKernels switches to a kernel set and returns the function that
// restores the previous one, or ok false when the CPU lacks the set.
func useKernels(avx2, avx512, bf16 bool) (restore func(), ok bool) {
	if (avx2 && !useAVX2) || (avx512 && !useAVX512) {
		return nil, false
	}
	rt, ok := setTiles(bf16, bf16)
	if !ok {
		return nil, false
	}
	r2 := setAVX2(avx2)
	r512 := setAVX512(avx512)
	return func() { r512(); r2(); rt() }, true
}

// TestMatmulAdd checks the packed product against a naive one, with each
// kernel set the CPU has, on shapes with and without edge tiles (rows not
// a multiple of 6 or 12, an odd number of panels, a last panel not full).
func TestMatmulAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := []struct{ m, k, n int }{
		{1, 1, 1}, {6, 16, 16}, {7, 5, 17}, {12, 16, 32}, {13, 37, 40}, {25, 9, 48}, {50, 256, 768}, {97, 512, 1536 / 4}, {2, 3, 100},
	}
	for _, kern := range kernelSets[:3] { // TestMatmulBF16 has the tiles
		for _, s := range shapes {
			t.Run(fmt.Sprintf("%s/%dx%dx%d", kern.name, s.m, s.k, s.n), func(t *testing.T) {
				restore, ok := useKernels(kern.avx2, kern.avx512, kern.bf16)
				if !ok {
					t.Skipf("CPU lacks the %s kernels", kern.name)
				}
				defer restore()
				a := randomMatrix(r, s.m*s.k)
				w := randomMatrix(r, s.k*s.n)
				init := randomMatrix(r, s.m*s.n)
				want := naiveMatmul(a, w, s.m, s.k, s.n)
				for i := range want {
					want[i] += init[i]
				}
				got := append([]float32(nil), init...)
				matmulAdd(got, a, s.m, newMatrix(w, s.k, s.n))
				for i := range got {
					if d := got[i] - want[i]; d > 1e-4 || d < -1e-4 {
						t.Fatalf("element %d: got %v, want %v", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// TestMatmulKernelsAgree checks that the AVX-512 kernel gives bit for bit
// what the AVX2 kernel gives, bias and rectification included: both run the
// same fused multiply-adds in the same order for every element, so moving
// to the wider tile changes no vector.
func TestMatmulKernelsAgree(t *testing.T) {
	if !useAVX512 {
		t.Skip("CPU lacks AVX-512")
	}
	r := rand.New(rand.NewPCG(5, 6))
	shapes := []struct{ m, k, n int }{{1, 1, 1}, {11, 7, 16}, {12, 64, 32}, {30, 64, 30}, {49, 256, 80}, {100, 512, 1536}, {1000, 256, 512}}
	for _, s := range shapes {
		t.Run(fmt.Sprintf("%dx%dx%d", s.m, s.k, s.n), func(t *testing.T) {
			a := randomMatrix(r, s.m*s.k)
			w := newMatrix(randomMatrix(r, s.k*s.n), s.k, s.n)
			e := epilogue{bias: randomMatrix(r, s.n), relu: true}
			init := randomMatrix(r, s.m*s.n)
			run := func(avx512 bool) []float32 {
				defer setAVX512(avx512)()
				c := append([]float32(nil), init...)
				matmul(c, a, s.m, w, e)
				return c
			}
			wide, narrow := run(true), run(false)
			for i := range wide {
				if math.Float32bits(wide[i]) != math.Float32bits(narrow[i]) {
					t.Fatalf("element %d: AVX-512 %v, AVX2 %v", i, wide[i], narrow[i])
				}
			}
		})
	}
}

// TestWideTilesAnyCPU runs the AVX-512 path's tiling (12 rows, two
// panels, its edge tiles) on the 6×16 kernels, which every CPU has, and
// checks it bit for bit against the 6×16 tiling.
func TestWideTilesAnyCPU(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, s := range []struct{ m, k, n int }{{1, 1, 1}, {11, 7, 16}, {12, 64, 32}, {30, 64, 30}, {49, 33, 80}} {
		for _, kern := range kernelSets[:2] {
			t.Run(fmt.Sprintf("%s/%dx%dx%d", kern.name, s.m, s.k, s.n), func(t *testing.T) {
				restore, ok := useKernels(kern.avx2, false, false)
				if !ok {
					t.Skipf("CPU lacks the %s kernel", kern.name)
				}
				defer restore()
				a := randomMatrix(r, s.m*s.k)
				w := newMatrix(randomMatrix(r, s.k*s.n), s.k, s.n)
				init := randomMatrix(r, s.m*s.n)
				narrow := append([]float32(nil), init...)
				narrowTiles.gemm(narrow, s.n, a, s.k, 0, s.m, w, 0, w.panels, new(scratch))
				wide := append([]float32(nil), init...)
				wideTiles.gemm(wide, s.n, a, s.k, 0, s.m, w, 0, w.panels, new(scratch))
				for i := range wide {
					if math.Float32bits(wide[i]) != math.Float32bits(narrow[i]) {
						t.Fatalf("element %d: wide tiles %v, 6×16 tiles %v", i, wide[i], narrow[i])
					}
				}
			})
		}
	}
}

// TestEpilogueHelpers checks the vector addTo and relu against their
// portable forms on every length up to two vectors and on the values
// where max and a comparison could differ (-0, NaN).
func TestEpilogueHelpers(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for n := range 40 {
		dst := randomMatrix(r, n)
		src := randomMatrix(r, n)
		if n > 2 {
			dst[0], dst[1], dst[2] = float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(-1))
		}
		want := append([]float32(nil), dst...)
		got := append([]float32(nil), dst...)
		addToGo(want, src)
		addTo(got, src)
		reluGo(want)
		relu(got)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d element %d: got %v, want %v", n, i, got[i], want[i])
			}
		}
	}
}

// TestMatmulEpilogue checks that a product with a bias and rectification
// done per block gives exactly (bit for bit) what separate passes over the
// whole result give, on shapes with and without edge tiles and jobs.
func TestMatmulEpilogue(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shapes := []struct{ m, k, n int }{{1, 1, 1}, {7, 5, 17}, {49, 64, 80}, {100, 256, 1536}}
	epilogues := []struct {
		name string
		e    epilogue
	}{
		{"none", epilogue{}},
		{"set bias", epilogue{setBias: true}},
		{"add bias", epilogue{}},
		{"set bias and relu", epilogue{setBias: true, relu: true}},
		{"relu only", epilogue{relu: true}},
	}
	for _, s := range shapes {
		for _, ep := range epilogues {
			t.Run(fmt.Sprintf("%dx%dx%d/%s", s.m, s.k, s.n, ep.name), func(t *testing.T) {
				a := randomMatrix(r, s.m*s.k)
				w := newMatrix(randomMatrix(r, s.k*s.n), s.k, s.n)
				init := randomMatrix(r, s.m*s.n)
				e := ep.e
				if ep.name != "none" && ep.name != "relu only" {
					e.bias = randomMatrix(r, s.n)
				}
				want := append([]float32(nil), init...)
				for row := range s.m {
					for j, v := range e.bias {
						if e.setBias {
							want[row*s.n+j] = v
						} else {
							want[row*s.n+j] += v
						}
					}
				}
				matmulAdd(want, a, s.m, w)
				if e.relu {
					for i, v := range want {
						if v < 0 {
							want[i] = 0
						}
					}
				}
				got := append([]float32(nil), init...)
				matmul(got, a, s.m, w, e)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("element %d: got %v, want %v", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// BenchmarkMatmul measures the product at the FFN's shape for 6 notes of
// 50 pieces, with b read in place and with b packed into panels, and
// reports GFLOP/s per wall second and per CPU second.
func BenchmarkMatmul(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	m, k, n := 300, 512, 1536
	a := randomMatrix(r, m*k)
	w := randomMatrix(r, k*n)
	inplace := &matrix{k: k, n: n, panels: n / panelWidth, data: w, ld: n, step: panelWidth}
	for _, bm := range []struct {
		name string
		w    *matrix
	}{{"inplace", inplace}, {"packed", newMatrix(w, k, n)}} {
		b.Run(bm.name, func(b *testing.B) {
			c := make([]float32, m*n)
			cpu0 := cpuTime()
			b.ResetTimer()
			for range b.N { // not b.Loop: see the note above BenchmarkQuery
				matmulAdd(c, a, m, bm.w)
			}
			flops := 2 * float64(m*k*n) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(flops/(cpuTime()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
		})
	}
}
