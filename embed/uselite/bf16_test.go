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

// TestRoundBF16 checks the vector rounding against toBF16 on every length
// up to three vectors' worth, on random bits (denormals, infinities and
// NaNs among them).
func TestRoundBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for n := range 100 {
		src := make([]float32, n)
		for i := range src {
			src[i] = math.Float32frombits(r.Uint32() >> (r.Uint32() % 2 * 24)) // small ones too
		}
		dst := make([]uint16, n)
		roundBF16(dst, src)
		for i, v := range src {
			want := toBF16(v)
			if v != v {
				if g := fromBF16(dst[i]); g == g {
					t.Fatalf("n=%d: roundBF16(NaN %#x) = %#x, not a NaN", n, math.Float32bits(v), dst[i])
				}
				continue
			}
			if dst[i] != want {
				t.Fatalf("n=%d, element %d: roundBF16(%#x) = %#x, toBF16 %#x", n, i, math.Float32bits(v), dst[i], want)
			}
		}
	}
}

// TestMatmulBF16 checks products on the bfloat16 tiles, with their bias
// and rectification, against float64 products of the rounded inputs, on
// shapes with edge blocks (rows, columns or k not a multiple of 32, an odd
// number of panels): the portable kernel everywhere, the AMX one where the
// CPU has it.
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
			rounded := func(x []float32) []float32 {
				out := make([]float32, len(x))
				for i, v := range x {
					out[i] = fromBF16(toBF16(v))
				}
				return out
			}
			exact := naiveMatmul(rounded(a), rounded(w), s.m, s.k, s.n)
			for _, e := range []epilogue{{}, {bias: bias, setBias: true, relu: true}, {bias: bias}} {
				want := make([]float32, len(exact))
				for i := range want {
					switch {
					case e.setBias:
						want[i] = bias[i%s.n]
					case e.bias != nil:
						want[i] = init[i] + bias[i%s.n]
					default:
						want[i] = init[i]
					}
					want[i] += exact[i]
					if e.relu && want[i] < 0 {
						want[i] = 0
					}
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
					tol := float32(s.k+2) * 1e-6
					for i := range got {
						if d := got[i] - want[i]; d > tol || d < -tol {
							t.Fatalf("AMX %v, %+v: element %d: got %v, want %v", asm, e, i, got[i], want[i])
						}
					}
				}
			}
		})
	}
}
