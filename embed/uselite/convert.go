package uselite

import (
	"archive/tar"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strings"
)

// Paths inside the npm tarball.
const (
	tarModelJSON = "package/dist/model.json"
	tarVocabJSON = "package/dist/vocab.json"
	tarLicense   = "package/LICENSE"
	tarDistDir   = "package/dist/"
)

// maxTarMember bounds what is read from any one tarball member, so a hostile
// archive cannot exhaust memory.
const maxTarMember = 64 << 20

// Name prefixes of the TF.js graph's weights.
const (
	tfKona  = "module_apply_default/Encoder_en/KonaTransformer/"
	tfStack = tfKona + "Encode/TransformerStack/"
	tfVars  = "module/Encoder_en/KonaTransformer/Encode/"
)

// tfTensorNames maps the converted file's tensor names to the names of the
// TF.js graph's weights (see model.json). Scalars of the graph (query
// scales, layer-norm epsilon, head count, clip length) are kept as
// one-element tensors so nothing about the graph is hard-coded twice.
func tfTensorNames() map[string]string {
	m := map[string]string{
		"embeddings": "module/Embeddings_en",
		"timing":     tfStack + "Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1",
		"ln_epsilon": tfStack + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x",
		"heads":      tfStack + "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2",
		"max_len":    tfKona + "ClipToMaxLength/Less/y",
		"l0.res.w":   tfKona + "Encode/Layer_0/TransformerLayer/dense/kernel/ConcatPartitions/concat",
		"l0.res.b":   tfKona + "Encode/Layer_0/TransformerLayer/dense/bias/ConcatPartitions/concat",
		"tanh.w":     "module/Encoder_en/hidden_layers/tanh_layer_0/weights",
		"tanh.b":     "module/Encoder_en/hidden_layers/tanh_layer_0/bias",
		"l2_epsilon": "module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y",
	}
	for _, l := range []string{"0", "1"} {
		enc := tfKona + "Encode/Layer_" + l + "/TransformerLayer/"
		stk := tfStack + "Layer_" + l + "/TransformerLayer/"
		vars := tfVars + "Layer_" + l + "/TransformerLayer/"
		p := "l" + l + "."
		m[p+"ln.scale"] = enc + "layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat"
		m[p+"ln.bias"] = enc + "layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat"
		m[p+"qkv.w"] = vars + "MultiheadAttention/qkv_transform_single/kernel/part_0"
		m[p+"qkv.b"] = enc + "MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat"
		m[p+"q_scale"] = stk + "MultiheadAttention/mul/y"
		m[p+"out.w"] = vars + "MultiheadAttention/output_transform_single/kernel/part_0"
		m[p+"out.b"] = enc + "MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat"
		m[p+"ffn.ln.scale"] = enc + "FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat"
		m[p+"ffn.ln.bias"] = enc + "FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat"
		m[p+"ffn1.w"] = stk + "FFN/conv1/Tensordot/Reshape_1"
		m[p+"ffn1.b"] = enc + "FFN/conv1/bias/ConcatPartitions/concat"
		m[p+"ffn2.w"] = stk + "FFN/conv2/Tensordot/Reshape_1"
		m[p+"ffn2.b"] = enc + "FFN/conv2/bias/ConcatPartitions/concat"
	}
	return m
}

// tfModel is the part of model.json that matters here.
type tfModel struct {
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name         string          `json:"name"`
			Shape        []int           `json:"shape"`
			Dtype        string          `json:"dtype"`
			Quantization json.RawMessage `json:"quantization"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

// packageFiles are the members of the npm tarball the converter needs.
type packageFiles struct {
	modelJSON []byte
	vocabJSON []byte
	license   []byte
	shards    map[string][]byte // by base name
}

// readPackage reads the model files out of a gzipped npm tarball.
func readPackage(r io.Reader) (*packageFiles, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("open gzip: %w", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	pf := &packageFiles{shards: map[string][]byte{}}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read tar: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := path.Clean(h.Name)
		want := name == tarModelJSON || name == tarVocabJSON || name == tarLicense ||
			(strings.HasPrefix(name, tarDistDir) && strings.Contains(path.Base(name), "shard"))
		if !want {
			continue
		}
		if h.Size > maxTarMember {
			return nil, fmt.Errorf("tar member %s: %d bytes is too large", name, h.Size)
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxTarMember))
		if err != nil {
			return nil, fmt.Errorf("read tar member %s: %w", name, err)
		}
		switch name {
		case tarModelJSON:
			pf.modelJSON = data
		case tarVocabJSON:
			pf.vocabJSON = data
		case tarLicense:
			pf.license = data
		default:
			pf.shards[path.Base(name)] = data
		}
	}
	if pf.modelJSON == nil || pf.vocabJSON == nil {
		return nil, fmt.Errorf("tarball lacks %s or %s", tarModelJSON, tarVocabJSON)
	}
	return pf, nil
}

// convert turns the package's TF.js graph weights and vocabulary into a
// bundle with the converted file's tensor names, checking every shape.
func convert(pf *packageFiles) (*bundle, error) {
	var m tfModel
	if err := json.Unmarshal(pf.modelJSON, &m); err != nil {
		return nil, fmt.Errorf("parse model.json: %w", err)
	}
	type spec struct {
		shape []int
		dtype string
		data  []byte
	}
	specs := map[string]spec{}
	for gi, g := range m.WeightsManifest {
		var buf []byte
		for _, p := range g.Paths {
			shard, ok := pf.shards[path.Base(p)]
			if !ok {
				return nil, fmt.Errorf("model.json group %d: shard %s missing from tarball", gi, p)
			}
			buf = append(buf, shard...)
		}
		off := 0
		for _, w := range g.Weights {
			if len(w.Quantization) > 0 && string(w.Quantization) != "null" {
				return nil, fmt.Errorf("weight %s: quantized weights are not supported", w.Name)
			}
			n := 1
			for _, d := range w.Shape {
				if d < 0 {
					return nil, fmt.Errorf("weight %s: bad shape %v", w.Name, w.Shape)
				}
				n *= d
			}
			size := 4 * n
			switch w.Dtype {
			case "float32", "int32":
			default:
				return nil, fmt.Errorf("weight %s: dtype %s is not supported", w.Name, w.Dtype)
			}
			if off+size > len(buf) {
				return nil, fmt.Errorf("weight %s: shards end after %d of %d bytes", w.Name, len(buf), off+size)
			}
			specs[w.Name] = spec{shape: w.Shape, dtype: w.Dtype, data: buf[off : off+size]}
			off += size
		}
		if off != len(buf) {
			return nil, fmt.Errorf("model.json group %d: %d bytes of shards left over", gi, len(buf)-off)
		}
	}
	names := tfTensorNames()
	b := &bundle{}
	for _, short := range canonicalOrder {
		tfName := names[short]
		s, ok := specs[tfName]
		if !ok {
			return nil, fmt.Errorf("model.json has no weight %s (for %s)", tfName, short)
		}
		n := len(s.data) / 4
		vals := make([]float32, n)
		for i := range vals {
			bits := binary.LittleEndian.Uint32(s.data[4*i:])
			if s.dtype == "int32" {
				vals[i] = float32(int32(bits))
			} else {
				vals[i] = math.Float32frombits(bits)
			}
		}
		shape := append([]int{}, s.shape...)
		b.tensors = append(b.tensors, tensor{name: short, shape: shape, data: vals})
	}
	var raw [][2]json.RawMessage
	if err := json.Unmarshal(pf.vocabJSON, &raw); err != nil {
		return nil, fmt.Errorf("parse vocab.json: %w", err)
	}
	b.vocab = make([]Piece, len(raw))
	for i, e := range raw {
		if err := json.Unmarshal(e[0], &b.vocab[i].Text); err != nil {
			return nil, fmt.Errorf("parse vocab.json entry %d: %w", i, err)
		}
		if err := json.Unmarshal(e[1], &b.vocab[i].Score); err != nil {
			return nil, fmt.Errorf("parse vocab.json entry %d: %w", i, err)
		}
	}
	if _, err := newNetwork(b); err != nil {
		return nil, fmt.Errorf("check converted model: %w", err)
	}
	return b, nil
}

// canonicalOrder is the order of tensors in the converted file.
var canonicalOrder = func() []string {
	order := []string{"embeddings", "timing", "ln_epsilon", "heads", "max_len", "l0.res.w", "l0.res.b"}
	for _, l := range []string{"l0.", "l1."} {
		for _, n := range []string{"ln.scale", "ln.bias", "qkv.w", "qkv.b", "q_scale", "out.w", "out.b",
			"ffn.ln.scale", "ffn.ln.bias", "ffn1.w", "ffn1.b", "ffn2.w", "ffn2.b"} {
			order = append(order, l+n)
		}
	}
	return append(order, "tanh.w", "tanh.b", "l2_epsilon")
}()
