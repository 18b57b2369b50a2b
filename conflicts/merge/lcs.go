package merge

// lcs returns the index pairs of a longest common subsequence of the keys
// of a and b, in order. It is Myers' O((n+m)·d) algorithm in its linear
// space form (find the middle snake of an optimal path, recurse on both
// halves), so a 10,000-note file costs two vectors, not an n×m table.
// Common prefix and suffix are matched first, which is all there is to it
// for the usual appends.
func lcs(a, b []unit) [][2]int {
	ids := make(map[string]int, len(a))
	ka, kb := make([]int, len(a)), make([]int, len(b))
	for i, u := range a {
		id, ok := ids[u.key]
		if !ok {
			id = len(ids)
			ids[u.key] = id
		}
		ka[i] = id
	}
	for i, u := range b {
		id, ok := ids[u.key]
		if !ok {
			id = -1 - i // in b only: equal to nothing of a
		}
		kb[i] = id
	}
	return lcsInts(ka, kb)
}

// lcsInts is lcs over integer keys.
func lcsInts(a, b []int) [][2]int {
	n := (len(a)+len(b)+1)/2 + 2
	m := &myers{a: a, b: b, vf: make([]int, 2*n+1), vb: make([]int, 2*n+1)}
	m.compare(0, len(a), 0, len(b))
	return m.pairs
}

type myers struct {
	a, b   []int
	vf, vb []int // furthest x on each diagonal, forward and backward
	pairs  [][2]int
}

// compare appends the pairs of an LCS of a[a0:a1] and b[b0:b1].
func (m *myers) compare(a0, a1, b0, b1 int) {
	for a0 < a1 && b0 < b1 && m.a[a0] == m.b[b0] {
		m.pairs = append(m.pairs, [2]int{a0, b0})
		a0++
		b0++
	}
	suf := 0
	for a0 < a1-suf && b0 < b1-suf && m.a[a1-1-suf] == m.b[b1-1-suf] {
		suf++
	}
	if a0 < a1-suf && b0 < b1-suf {
		x, y := m.middle(a0, a1-suf, b0, b1-suf)
		m.compare(a0, x, b0, y)
		m.compare(x, a1-suf, y, b1-suf)
	}
	for k := suf; k > 0; k-- {
		m.pairs = append(m.pairs, [2]int{a1 - k, b1 - k})
	}
}

// middle returns a point of an optimal edit path from (a0, b0) to
// (a1, b1) that splits it into two shorter ones: where the furthest
// forward and backward paths of d edits first meet. The ends differ (the
// caller matched common prefix and suffix), so both parts have edits.
func (m *myers) middle(a0, a1, b0, b1 int) (int, int) {
	n, mm := a1-a0, b1-b0
	delta := n - mm
	odd := delta%2 != 0
	off := (n+mm+1)/2 + 1
	vf, vb := m.vf, m.vb
	vf[off+1], vb[off+1] = 0, 0
	for d := 0; d <= (n+mm+1)/2; d++ {
		// Forward: vf[off+k] is the furthest x on diagonal k = x-y.
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && vf[off+k-1] < vf[off+k+1] {
				x = vf[off+k+1]
			} else {
				x = vf[off+k-1] + 1
			}
			y := x - k
			for x < n && y < mm && m.a[a0+x] == m.b[b0+y] {
				x++
				y++
			}
			vf[off+k] = x
			// The backward paths of d-1 edits lie on diagonals
			// delta-k in [-(d-1), d-1], counted from the end.
			if kr := delta - k; odd && kr >= -(d-1) && kr <= d-1 && x+vb[off+kr] >= n {
				return a0 + x, b0 + y
			}
		}
		// Backward, in coordinates counted from (a1, b1).
		for kr := -d; kr <= d; kr += 2 {
			var x int
			if kr == -d || kr != d && vb[off+kr-1] < vb[off+kr+1] {
				x = vb[off+kr+1]
			} else {
				x = vb[off+kr-1] + 1
			}
			y := x - kr
			for x < n && y < mm && m.a[a1-1-x] == m.b[b1-1-y] {
				x++
				y++
			}
			vb[off+kr] = x
			if k := delta - kr; !odd && k >= -d && k <= d && x+vf[off+k] >= n {
				return a1 - x, b1 - y
			}
		}
	}
	// Not reached: the paths meet by d = ceil((n+m)/2).
	return a0 + n/2, b0 + mm/2
}
