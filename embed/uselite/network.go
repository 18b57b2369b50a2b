package uselite

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// layer is one transformer layer of the encoder, weights wrapped for the
// matrix kernel. Shapes: din inputs, inner = width of q, k and v (split
// into heads), dout outputs, dff hidden units of the feed-forward block.
type layer struct {
	din, inner, dout, dff, heads int
	qScale                       float32

	lnScale, lnBias []float32 // [din]
	res             *matrix   // [din×dout] residual projection, or nil when din == dout
	resB            []float32
	qkv             *matrix // [din×3·inner]
	qkvB            []float32
	out             *matrix // [inner×dout]
	outB            []float32

	ffnLnScale, ffnLnBias []float32 // [dout]
	ffn1                  *matrix   // [dout×dff]
	ffn1B                 []float32
	ffn2                  *matrix // [dff×dout]
	ffn2B                 []float32
}

// network is the whole encoder: embeddings, timing signal, transformer
// layers, masked mean, tanh layer and L2 normalisation.
type network struct {
	vocab, dEmb   int
	embed         []float32 // [vocab×dEmb]
	invTimescales []float32 // [dEmb/2]
	timing        []float32 // [maxLen×dEmb]: sin and cos of position·invTimescales
	lnEps         float32
	l2Eps         float32
	maxLen        int
	layers        []layer
	tanh          *matrix // [dModel×dOut]
	tanhB         []float32
	dOut          int
	pool          sync.Pool // of *workspace
}

// newNetwork checks the bundle's shapes and builds the network.
func newNetwork(b *bundle) (*network, error) {
	r := &tensors{b: b, tiles: tilesUsable()}
	n, heads, err := r.embedding()
	if err != nil {
		return nil, err
	}
	din := n.dEmb
	for _, p := range []string{"l0.", "l1."} {
		l, err := r.layer(p, din, heads)
		if err != nil {
			return nil, err
		}
		n.layers = append(n.layers, l)
		din = l.dout
	}
	tw := r.shape("tanh.w")
	if len(tw) != 2 || tw[0] != din {
		return nil, fmt.Errorf("tensor tanh.w has shape %v, want [%d out]", tw, din)
	}
	n.dOut = tw[1]
	n.tanh = r.mat("tanh.w", din, n.dOut)
	n.tanhB = r.get("tanh.b", n.dOut)
	if r.err != nil {
		return nil, r.err
	}
	return n, nil
}

// tensors reads a bundle's tensors, checked for their shapes; err is the
// first problem found.
type tensors struct {
	b     *bundle
	tiles bool // the tile kernel runs: weights get bfloat16 panels too
	err   error
}

// get returns tensor name's data, which must have shape (dimensions of 1
// aside).
func (r *tensors) get(name string, shape ...int) []float32 {
	t, ok := r.b.get(name)
	if !ok {
		if r.err == nil {
			r.err = fmt.Errorf("tensor %s missing (have %v)", name, r.b.sortedNames())
		}
		return nil
	}
	want := slices.DeleteFunc(slices.Clone(shape), func(d int) bool { return d == 1 })
	have := slices.DeleteFunc(slices.Clone(t.shape), func(d int) bool { return d == 1 })
	if !slices.Equal(want, have) && r.err == nil {
		r.err = fmt.Errorf("tensor %s has shape %v, want %v", name, t.shape, shape)
	}
	return t.data
}

// shape is tensor name's shape, nil when it is missing.
func (r *tensors) shape(name string) []int {
	t, ok := r.b.get(name)
	if !ok {
		return nil
	}
	return t.shape
}

// scalar is the one value of tensor name, 0 when it has none.
func (r *tensors) scalar(name string) float32 {
	if d := r.get(name, 1); len(d) == 1 {
		return d[0]
	}
	return 0
}

// panels is weight matrix name (k×n) packed into panels, unless the
// bundle holds its panels already (a packed file, packed.go).
func (r *tensors) panels(name string, k, n int) *matrix {
	w := r.get(name, k, n)
	if t, ok := r.b.get(name + panelsSuffix); ok && len(t.shape) == 2 && t.shape[0] == k && t.shape[1] == n {
		p := &matrix{k: k, n: n, panels: (n + panelWidth - 1) / panelWidth, ld: panelWidth, step: k * panelWidth}
		if len(t.data) == p.panels*p.step {
			p.data = t.data
			return p
		}
	}
	return newMatrix(w, k, n)
}

// mat is weight matrix name (k×n) in panels and, where the tile kernel
// runs, in bfloat16 panels too, likewise.
func (r *tensors) mat(name string, k, n int) *matrix {
	p := r.panels(name, k, n)
	if r.tiles && p.k > 0 && p.n > 0 {
		p.bf = bf16Of(r.b, name, p)
	}
	return p
}

// embedding reads the embedding table, the timing signal and the
// network's scalars, and returns the network so far and its head count.
func (r *tensors) embedding() (*network, int, error) {
	emb := r.shape("embeddings")
	if len(emb) != 2 {
		return nil, 0, fmt.Errorf("tensor embeddings has shape %v, want [vocab dim]", emb)
	}
	n := &network{vocab: emb[0], dEmb: emb[1]}
	if n.vocab < len(r.b.vocab) || n.dEmb%2 != 0 || n.dEmb == 0 {
		return nil, 0, fmt.Errorf("embeddings %v do not fit a vocabulary of %d pieces", emb, len(r.b.vocab))
	}
	n.embed = r.get("embeddings", n.vocab, n.dEmb)
	n.invTimescales = r.get("timing", n.dEmb/2)
	n.lnEps = r.scalar("ln_epsilon")
	n.l2Eps = r.scalar("l2_epsilon")
	n.maxLen = int(r.scalar("max_len"))
	heads := int(r.scalar("heads"))
	if r.err != nil {
		return nil, 0, r.err
	}
	if heads <= 0 || n.maxLen <= 0 || n.maxLen > 1<<16 {
		return nil, 0, fmt.Errorf("bad head count %d or clip length %d", heads, n.maxLen)
	}
	if t, ok := r.b.get(timingTable); ok && len(t.data) == n.maxLen*n.dEmb {
		n.timing = t.data
	} else {
		n.timing = timingSignal(n.maxLen, n.dEmb, n.invTimescales)
	}
	return n, heads, nil
}

// layer reads the transformer layer whose tensors start with p, of din
// inputs.
func (r *tensors) layer(p string, din, heads int) (layer, error) {
	qkv := r.shape(p + "qkv.w")
	out := r.shape(p + "out.w")
	ffn1 := r.shape(p + "ffn1.w")
	if len(qkv) == 0 || len(out) == 0 || len(ffn1) != 2 || qkv[len(qkv)-1]%3 != 0 {
		return layer{}, fmt.Errorf("layer %s: bad attention or FFN shapes %v %v %v", p, qkv, out, ffn1)
	}
	l := layer{din: din, inner: qkv[len(qkv)-1] / 3, dout: out[len(out)-1], dff: ffn1[1], heads: heads}
	if l.inner%heads != 0 {
		return layer{}, fmt.Errorf("layer %s: width %d does not split into %d heads", p, l.inner, heads)
	}
	l.qScale = r.scalar(p + "q_scale")
	l.lnScale = r.get(p+"ln.scale", din)
	l.lnBias = r.get(p+"ln.bias", din)
	if _, ok := r.b.get(p + "res.w"); ok {
		l.res = r.mat(p+"res.w", din, l.dout)
		l.resB = r.get(p+"res.b", l.dout)
	} else if din != l.dout {
		return layer{}, fmt.Errorf("layer %s: %d inputs, %d outputs and no residual projection", p, din, l.dout)
	}
	l.qkv = r.mat(p+"qkv.w", din, 3*l.inner)
	l.qkvB = r.get(p+"qkv.b", 3*l.inner)
	l.out = r.mat(p+"out.w", l.inner, l.dout)
	l.outB = r.get(p+"out.b", l.dout)
	l.ffnLnScale = r.get(p+"ffn.ln.scale", l.dout)
	l.ffnLnBias = r.get(p+"ffn.ln.bias", l.dout)
	l.ffn1 = r.mat(p+"ffn1.w", l.dout, l.dff)
	l.ffn1B = r.get(p+"ffn1.b", l.dff)
	l.ffn2 = r.mat(p+"ffn2.w", l.dff, l.dout)
	l.ffn2B = r.get(p+"ffn2.b", l.dout)
	if r.err != nil {
		return layer{}, r.err
	}
	return l, nil
}

// timingSignal is the sinusoidal timing signal: for each position p the
// sines, then the cosines, of p·invTimescales.
func timingSignal(maxLen, dEmb int, invTimescales []float32) []float32 {
	timing := make([]float32, maxLen*dEmb)
	for p := range maxLen {
		row := timing[p*dEmb : (p+1)*dEmb]
		for j, inv := range invTimescales {
			t := float64(float32(p) * inv)
			row[j] = float32(math.Sin(t))
			row[dEmb/2+j] = float32(math.Cos(t))
		}
	}
	return timing
}

// matrices returns the network's weight matrices by the name of their
// tensor.
func (n *network) matrices() map[string]*matrix {
	out := map[string]*matrix{"tanh.w": n.tanh}
	for i, l := range n.layers {
		p := fmt.Sprintf("l%d.", i)
		out[p+"qkv.w"], out[p+"out.w"], out[p+"ffn1.w"], out[p+"ffn2.w"] = l.qkv, l.out, l.ffn1, l.ffn2
		if l.res != nil {
			out[p+"res.w"] = l.res
		}
	}
	return out
}

// workspace holds the activations of one forward pass, reused layer
// after layer.
type workspace struct {
	bufs    [2][]float32 // layer inputs and outputs, m×max width each
	h       []float32    // layer-normed rows
	qkv     []float32
	att     []float32
	f       []float32 // FFN hidden units
	current int       // index in bufs of the current layer input
}

// workspace returns a workspace for m rows, reusing a pooled one when it
// is large enough; put it back with n.pool.Put.
func (n *network) workspace(m int) *workspace {
	wmax, inner, dff := n.dEmb, 0, 0
	for _, l := range n.layers {
		wmax = max(wmax, l.din, l.dout)
		inner = max(inner, l.inner)
		dff = max(dff, l.dff)
	}
	ws, _ := n.pool.Get().(*workspace)
	if ws == nil {
		ws = &workspace{}
	}
	// Round the rows up so that batches of similar size share buffers.
	rows := (m + 255) / 256 * 256
	for _, b := range []struct {
		buf   *[]float32
		width int
	}{{&ws.bufs[0], wmax}, {&ws.bufs[1], wmax}, {&ws.h, wmax}, {&ws.qkv, 3 * inner}, {&ws.att, inner}, {&ws.f, dff}} {
		grow(b.buf, rows*b.width)
	}
	ws.current = 0
	return ws
}

// forward embeds token sequences (ids < vocab, each at most maxLen long)
// and returns one L2-normalised vector per sequence. All tokens of all
// sequences go through the dense layers as one matrix.
func (n *network) forward(seqs [][]int) [][]float32 {
	offs := make([]int, len(seqs)+1)
	for i, s := range seqs {
		offs[i+1] = offs[i] + len(s)
	}
	m := offs[len(seqs)]
	ws := n.workspace(m)
	defer n.pool.Put(ws)
	d := n.dEmb
	x := ws.bufs[0][:m*d]
	parallelFor(len(seqs), func(i int, _ *scratch) {
		for p, id := range seqs[i] {
			// The graph adds the timing signal to the embedding and then
			// adds the embedding once more: 2·embedding + timing.
			row := x[(offs[i]+p)*d : (offs[i]+p+1)*d]
			timing := n.timing[p*d : (p+1)*d]
			for j, v := range n.embed[id*d : (id+1)*d] {
				row[j] = v + v + timing[j]
			}
		}
	})
	for li := range n.layers {
		x = n.layers[li].apply(ws, m, offs, n.lnEps)
	}
	dm := n.layers[len(n.layers)-1].dout
	pooled := make([]float32, len(seqs)*dm)
	parallelFor(len(seqs), func(i int, _ *scratch) {
		dst := pooled[i*dm : (i+1)*dm]
		cnt := offs[i+1] - offs[i]
		for r := offs[i]; r < offs[i+1]; r++ {
			for j, v := range x[r*dm : (r+1)*dm] {
				dst[j] += v
			}
		}
		div := float32(max(cnt, 1))
		for j := range dst {
			dst[j] /= div
		}
	})
	hidden := make([]float32, len(seqs)*n.dOut)
	matmul(hidden, pooled, len(seqs), n.tanh, epilogue{bias: n.tanhB, setBias: true})
	out := make([][]float32, len(seqs))
	for i := range seqs {
		v := hidden[i*n.dOut : (i+1)*n.dOut : (i+1)*n.dOut]
		var ss float64
		for j, h := range v {
			t := float32(math.Tanh(float64(h)))
			v[j] = t
			ss += float64(t) * float64(t)
		}
		scale := float32(1 / math.Sqrt(max(ss, float64(n.l2Eps))))
		for j := range v {
			v[j] *= scale
		}
		out[i] = v
	}
	return out
}

// apply runs one pre-norm transformer layer over the m rows (din wide) of
// the workspace's current buffer and returns its output rows (dout wide),
// which become the current buffer; offs delimits the sequences, which
// attend only within themselves.
func (l *layer) apply(ws *workspace, m int, offs []int, eps float32) []float32 {
	x := ws.bufs[ws.current][:m*l.din]
	h := ws.h[:m*l.din]
	layerNorm(h, x, m, l.din, l.lnScale, l.lnBias, eps)
	resid := x
	if l.res != nil {
		ws.current = 1 - ws.current
		resid = ws.bufs[ws.current][:m*l.dout]
		matmul(resid, x, m, l.res, epilogue{bias: l.resB, setBias: true})
	}
	qkv := ws.qkv[:m*3*l.inner]
	matmul(qkv, h, m, l.qkv, epilogue{bias: l.qkvB, setBias: true})
	att := ws.att[:m*l.inner]
	l.attention(att, qkv, offs)
	matmul(resid, att, m, l.out, epilogue{bias: l.outB})
	h2 := ws.h[:m*l.dout]
	layerNorm(h2, resid, m, l.dout, l.ffnLnScale, l.ffnLnBias, eps)
	f := ws.f[:m*l.dff]
	matmul(f, h2, m, l.ffn1, epilogue{bias: l.ffn1B, setBias: true, relu: true})
	matmul(resid, f, m, l.ffn2, epilogue{bias: l.ffn2B})
	return resid
}

// attention writes to att (m×inner) the multi-head scaled
// dot-product attention of each sequence with itself; qkv rows hold q, k
// and v side by side. Both products of each (sequence, head) pair run on
// the matrix kernel, with the head's keys (transposed, packed) and values
// as right-hand sides. The graph's padding mask has no counterpart here:
// sequences are never padded.
func (l *layer) attention(att, qkv []float32, offs []int) {
	nseq := len(offs) - 1
	w := 3 * l.inner
	hd := l.inner / l.heads
	parallelFor(nseq*l.heads, func(job int, sc *scratch) {
		s, h := job/l.heads, job%l.heads
		o, t := offs[s], offs[s+1]-offs[s]
		if t == 0 {
			return
		}
		q := qkv[o*w+h*hd:]
		k := qkv[o*w+l.inner+h*hd:]
		v := qkv[o*w+2*l.inner+h*hd:]
		for r := o; r < o+t; r++ {
			clear(att[r*l.inner+h*hd : r*l.inner+(h+1)*hd])
		}
		kp := &sc.keys
		packStrided(kp, k, hd, t, 1, w) // kᵀ: hd×t
		vp := &matrix{k: t, n: hd, panels: hd / panelWidth, data: v, ld: w, step: panelWidth}
		if hd%panelWidth != 0 {
			vp = &matrix{}
			packStrided(vp, v, t, hd, w, 1)
		}
		scores := grow(&sc.scores, t*t)
		clear(scores)
		gemmBlock(scores, t, q, w, 0, t, kp, 0, kp.panels, sc)
		for i := range t {
			row := scores[i*t : (i+1)*t]
			mx := float32(math.Inf(-1))
			for j, v := range row {
				row[j] = v * l.qScale
				mx = max(mx, row[j])
			}
			var sum float32
			for j, v := range row {
				e := float32(math.Exp(float64(v - mx)))
				row[j] = e
				sum += e
			}
			inv := 1 / sum
			for j := range row {
				row[j] *= inv
			}
		}
		gemmBlock(att[o*l.inner+h*hd:], l.inner, scores, t, 0, t, vp, 0, vp.panels, sc)
	})
}

// rowsPerNormJob is how many rows one parallel job of layerNorm covers.
const rowsPerNormJob = 32

// layerNorm writes to dst each of the m rows of x (width d) normalised to
// zero mean and unit variance, then scaled and shifted. Blocks of rows run
// in parallel.
func layerNorm(dst, x []float32, m, d int, scale, bias []float32, eps float32) {
	parallelFor((m+rowsPerNormJob-1)/rowsPerNormJob, func(job int, _ *scratch) {
		for r := job * rowsPerNormJob; r < min(m, (job+1)*rowsPerNormJob); r++ {
			normRow(dst[r*d:(r+1)*d], x[r*d:(r+1)*d], scale, bias, eps)
		}
	})
}

// normRow writes row normalised to zero mean and unit variance, then
// scaled and shifted, to out. The sums run in float64 over four
// accumulators, which keeps them off one chain of dependent additions.
func normRow(out, row, scale, bias []float32, eps float32) {
	d := len(row)
	out, scale, bias = out[:d], scale[:d], bias[:d]
	var m0, m1, m2, m3 float64
	j := 0
	for ; j+4 <= d; j += 4 {
		m0 += float64(row[j])
		m1 += float64(row[j+1])
		m2 += float64(row[j+2])
		m3 += float64(row[j+3])
	}
	for ; j < d; j++ {
		m0 += float64(row[j])
	}
	mean := (m0 + m1 + m2 + m3) / float64(d)
	var v0, v1, v2, v3 float64
	j = 0
	for ; j+4 <= d; j += 4 {
		d0, d1 := float64(row[j])-mean, float64(row[j+1])-mean
		d2, d3 := float64(row[j+2])-mean, float64(row[j+3])-mean
		v0 += d0 * d0
		v1 += d1 * d1
		v2 += d2 * d2
		v3 += d3 * d3
	}
	for ; j < d; j++ {
		dv := float64(row[j]) - mean
		v0 += dv * dv
	}
	variance := (v0 + v1 + v2 + v3) / float64(d)
	inv := 1 / math.Sqrt(variance+float64(eps))
	for j, v := range row {
		out[j] = float32((float64(v)-mean)*inv)*scale[j] + bias[j]
	}
}
