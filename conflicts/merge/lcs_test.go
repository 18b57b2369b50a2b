package merge

import (
	"math/rand/v2"
	"strconv"
	"testing"

	udifflcs "github.com/aymanbagabas/go-udiff/lcs"
)

// TestLCS checks the linear-space LCS on random sequences over small
// alphabets: its pairs match equal keys in increasing order, and there are
// as many as the longest common subsequence has, by the quadratic table
// and by go-udiff's Myers implementation.
func TestLCS(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		a, b := randomKeys(r), randomKeys(r)
		if i%3 == 0 {
			b = editKeys(r, a)
		}
		pairs := lcsInts(a, b)
		for k, p := range pairs {
			if a[p[0]] != b[p[1]] || k > 0 && (p[0] <= pairs[k-1][0] || p[1] <= pairs[k-1][1]) {
				t.Fatalf("a=%v b=%v: bad pairs %v", a, b, pairs)
			}
		}
		if want := tableLCS(a, b); len(pairs) != want {
			t.Fatalf("a=%v b=%v: %d pairs, the LCS has %d", a, b, len(pairs), want)
		}
		if lib := libraryLCS(a, b); len(pairs) != lib {
			t.Fatalf("a=%v b=%v: %d pairs, go-udiff's lcs has %d", a, b, len(pairs), lib)
		}
	}
}

func randomKeys(r *rand.Rand) []int {
	k := make([]int, r.IntN(30))
	alphabet := 1 + r.IntN(6)
	for i := range k {
		k[i] = r.IntN(alphabet)
	}
	return k
}

// editKeys returns a with a few keys removed, changed and added.
func editKeys(r *rand.Rand, a []int) []int {
	var out []int
	for _, k := range a {
		switch r.IntN(8) {
		case 0:
		case 1:
			out = append(out, k+100)
		case 2:
			out = append(out, k, r.IntN(200))
		default:
			out = append(out, k)
		}
	}
	return out
}

// tableLCS is the length of an LCS by the n×m table.
func tableLCS(a, b []int) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// libraryLCS is the length of the common subsequence go-udiff finds.
func libraryLCS(a, b []int) int {
	str := func(k []int) []string {
		s := make([]string, len(k))
		for i, v := range k {
			s[i] = strconv.Itoa(v)
		}
		return s
	}
	common := len(a)
	for _, d := range udifflcs.DiffLines(str(a), str(b)) {
		common -= d.End - d.Start
	}
	return common
}
