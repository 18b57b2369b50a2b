package uselite

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// nearestBF16 is toBF16 by comparison: of the two bfloat16 values around
// v, the nearer one, the even one on a tie; a denormal is zero.
func nearestBF16(v float32) uint16 {
	u := math.Float32bits(v)
	if v != v {
		return uint16(u>>16) | 0x40
	}
	if math.Abs(float64(v)) < 0x1p-126 {
		return uint16(u>>16) & 0x8000
	}
	lo := uint16(u >> 16)
	if u&0xffff == 0 {
		return lo
	}
	hi := lo + 1 // the next value away from zero
	dlo := math.Abs(float64(v) - float64(fromBF16(lo)))
	dhi := math.Abs(float64(fromBF16(hi)) - float64(v))
	if math.IsInf(float64(fromBF16(hi)), 0) {
		// IEEE rounds to infinity from half a step (2^119) past the
		// largest finite value.
		if math.Abs(float64(v)) >= math.Abs(float64(fromBF16(lo)))+math.Ldexp(1, 119) {
			return hi
		}
		return lo
	}
	switch {
	case dlo < dhi:
		return lo
	case dhi < dlo:
		return hi
	case lo%2 == 0:
		return lo
	}
	return hi
}

func TestToBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	values := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 1.00390625, 1.005859375, 1.001953125, 1.0029296875,
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7f7f8000), math.Float32frombits(0x7f7f7fff), math.Float32frombits(0x00018000),
		math.Float32frombits(0x80000001), math.Float32frombits(0x007fffff), math.Float32frombits(0x00800000)}
	for range 100000 {
		values = append(values, math.Float32frombits(r.Uint32()))
	}
	for _, v := range values {
		got, want := toBF16(v), nearestBF16(v)
		if v != v {
			if g := fromBF16(got); g == g {
				t.Fatalf("toBF16(NaN %#x) = %#x, not a NaN", math.Float32bits(v), got)
			}
			continue
		}
		if got != want {
			t.Fatalf("toBF16(%v = %#x) = %#x, want %#x", v, math.Float32bits(v), got, want)
		}
	}
}

// TestSplitBF16 checks the split of a float32 into bfloat16 parts: hi is
// toBF16(v), lo the rest rounded, and hi + lo within 2^-16 of v (where the
// rest is no denormal); lo is zero where hi is not finite. splitBF16s,
// the vector split, must give the same parts on every length up to three
// vectors' worth, on random bits (denormals, infinities and NaNs among
// them).
func TestSplitBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	values := []float32{0, 1, -1, 1.00390625, 1 + 0x1p-20, math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)),
		float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0x7f7f8000), math.Float32frombits(0x00800000),
		math.Float32frombits(0x00812345), math.SmallestNonzeroFloat32}
	for range 100000 {
		values = append(values, math.Float32frombits(r.Uint32()))
	}
	for _, v := range values {
		hi, lo := splitBF16(v)
		if want := toBF16(v); hi != want && v == v {
			t.Fatalf("splitBF16(%#x): hi %#x, want toBF16's %#x", math.Float32bits(v), hi, want)
		}
		h := fromBF16(hi)
		if math.IsInf(float64(h), 0) || h != h {
			if lo != 0 {
				t.Fatalf("splitBF16(%#x): hi %#x is not finite, lo %#x", math.Float32bits(v), hi, lo)
			}
			continue
		}
		if want := toBF16(v - h); lo != want {
			t.Fatalf("splitBF16(%#x): lo %#x, want %#x", math.Float32bits(v), lo, want)
		}
		if rest := math.Abs(float64(v - h)); rest >= 0x1p-126 {
			if d := math.Abs(float64(v) - float64(h) - float64(fromBF16(lo))); d > math.Abs(float64(v))*0x1p-16 {
				t.Fatalf("splitBF16(%v): hi + lo = %v, off by %g", v, float64(h)+float64(fromBF16(lo)), d)
			}
		}
	}
	for n := range 100 {
		src := make([]float32, n)
		for i := range src {
			src[i] = math.Float32frombits(r.Uint32() >> (r.Uint32() % 2 * 24))
		}
		src = append(src, values[:n%len(values)]...) // the special values too
		hi, lo := make([]uint16, len(src)), make([]uint16, len(src))
		splitBF16s(hi, lo, src)
		for i, v := range src {
			wantHi, wantLo := splitBF16(v)
			if v != v {
				if g := fromBF16(hi[i]); g == g || lo[i] != 0 {
					t.Fatalf("n=%d: splitBF16s(NaN %#x) = %#x, %#x, want a NaN and 0", len(src), math.Float32bits(v), hi[i], lo[i])
				}
				continue
			}
			if hi[i] != wantHi || lo[i] != wantLo {
				t.Fatalf("n=%d, element %d: splitBF16s(%#x) = %#x, %#x, splitBF16 %#x, %#x", len(src), i, math.Float32bits(v), hi[i], lo[i], wantHi, wantLo)
			}
		}
	}
}

// TestMatmulBF16 checks products on the bfloat16 tiles, with their bias
// and rectification, on shapes with edge blocks (rows, columns or k not a
// multiple of 32, an odd number of panels): the portable kernel
// everywhere, the AMX one where the CPU has it. Each is held to the
// float64 product of the parts it multiplies to within float32 sums, and
// to the float64 product of the unrounded inputs to within the parts'
// precision: 3·2^-16 of each |a·b| (a_lo·b_lo and the low parts' rounding
// left out).
func TestMatmulBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	shapes := []struct{ m, k, n int }{
		{1, 1, 1}, {32, 32, 32}, {33, 40, 17}, {64, 512, 96}, {5, 1536, 48}, {70, 33, 100}, {97, 256, 768 / 4},
	}
	for _, s := range shapes {
		t.Run(fmt.Sprintf("%dx%dx%d", s.m, s.k, s.n), func(t *testing.T) {
			a := randomMatrix(r, s.m*s.k)
			w := randomMatrix(r, s.k*s.n)
			init := randomMatrix(r, s.m*s.n)
			bias := randomMatrix(r, s.n)
			b := newMatrix(w, s.k, s.n)
			b.bf = newBF16Matrix(b)
			parts := func(x []float32) (hi, lo []float64) {
				hi, lo = make([]float64, len(x)), make([]float64, len(x))
				for i, v := range x {
					h, l := splitBF16(v)
					hi[i], lo[i] = float64(fromBF16(h)), float64(fromBF16(l))
				}
				return hi, lo
			}
			ahi, alo := parts(a)
			whi, wlo := parts(w)
			// exact is the float64 product of the parts the kernel
			// multiplies; size is Σ|a·b|.
			exact, truth, size := make([]float64, s.m*s.n), make([]float64, s.m*s.n), make([]float64, s.m*s.n)
			for i := range s.m {
				for j := range s.n {
					var e3, x, sz float64
					for kk := range s.k {
						ai, wi := i*s.k+kk, kk*s.n+j
						e3 += ahi[ai]*whi[wi] + alo[ai]*whi[wi] + ahi[ai]*wlo[wi]
						x += float64(a[ai]) * float64(w[wi])
						sz += math.Abs(float64(a[ai]) * float64(w[wi]))
					}
					exact[i*s.n+j] = e3
					truth[i*s.n+j], size[i*s.n+j] = x, sz
				}
			}
			for _, e := range []epilogue{{}, {bias: bias, setBias: true, relu: true}, {bias: bias}} {
				with := func(prod []float64) []float64 {
					want := make([]float64, len(prod))
					for i := range want {
						switch {
						case e.setBias:
							want[i] = float64(bias[i%s.n])
						case e.bias != nil:
							want[i] = float64(init[i] + bias[i%s.n])
						default:
							want[i] = float64(init[i])
						}
						want[i] += prod[i]
						if e.relu && want[i] < 0 {
							want[i] = 0
						}
					}
					return want
				}
				run := func(asm bool) ([]float32, bool) {
					restore, ok := setTiles(true, asm)
					if !ok {
						return nil, false
					}
					defer restore()
					c := append([]float32(nil), init...)
					matmul(c, a, s.m, b, e)
					return c, true
				}
				for _, asm := range []bool{false, true} {
					got, ok := run(asm)
					if !ok {
						continue
					}
					// Float32 sums of k products below 1 in size; the two
					// kernels round differently within a chunk of k.
					tol := float64(s.k+2) * 1e-6
					want := with(exact)
					for i := range got {
						if d := math.Abs(float64(got[i]) - want[i]); d > tol {
							t.Fatalf("AMX %v, %+v: element %d: got %v, want %v", asm, e, i, got[i], want[i])
						}
					}
					want = with(truth)
					for i := range got {
						if d := math.Abs(float64(got[i]) - want[i]); d > tol+3*0x1p-16*size[i] {
							t.Fatalf("AMX %v, %+v: element %d: got %v, float64 %v", asm, e, i, got[i], want[i])
						}
					}
				}
			}
		})
	}
}
