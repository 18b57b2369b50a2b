package uselite

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// The converted model file holds everything the forward pass needs in one
// place, little-endian:
//
//	magic    [8]byte  "MMUSEL01"
//	ntensors uint32
//	ntensors × { namelen uint16, name, ndims uint8, dims [ndims]uint32,
//	             data [prod(dims)]float32 }
//	npieces  uint32
//	npieces × { score float64, textlen uint16, text }
//	sha256   [32]byte of everything before it
//
// The checksum makes a truncated or damaged file fail to load instead of
// producing wrong vectors.
const fileMagic = "MMUSEL01"

// ErrCorrupt is returned (wrapped) when a converted model file fails its
// checksum or cannot be parsed.
var ErrCorrupt = errors.New("corrupt converted model file")

// tensor is a named float32 array with its shape.
type tensor struct {
	name  string
	shape []int
	data  []float32
}

func (t tensor) size() int {
	n := 1
	for _, d := range t.shape {
		n *= d
	}
	return n
}

// bundle is the content of a converted file.
type bundle struct {
	tensors []tensor
	vocab   []Piece
}

func (b *bundle) get(name string) (tensor, bool) {
	for _, t := range b.tensors {
		if t.name == name {
			return t, true
		}
	}
	return tensor{}, false
}

// encode serialises b into the converted-file format, checksum included.
func (b *bundle) encode() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(fileMagic)
	le := binary.LittleEndian
	var scratch [8]byte
	put32 := func(v uint32) { le.PutUint32(scratch[:4], v); buf.Write(scratch[:4]) }
	put16 := func(v uint16) { le.PutUint16(scratch[:2], v); buf.Write(scratch[:2]) }
	put32(uint32(len(b.tensors)))
	for _, t := range b.tensors {
		if len(t.name) > math.MaxUint16 || len(t.shape) > math.MaxUint8 {
			return nil, fmt.Errorf("encode tensor %q: name or rank too large", t.name)
		}
		if t.size() != len(t.data) {
			return nil, fmt.Errorf("encode tensor %q: shape %v does not match %d values", t.name, t.shape, len(t.data))
		}
		put16(uint16(len(t.name)))
		buf.WriteString(t.name)
		buf.WriteByte(byte(len(t.shape)))
		for _, d := range t.shape {
			put32(uint32(d))
		}
		raw := make([]byte, 4*len(t.data))
		for i, v := range t.data {
			le.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		buf.Write(raw)
	}
	put32(uint32(len(b.vocab)))
	for _, p := range b.vocab {
		if len(p.Text) > math.MaxUint16 {
			return nil, fmt.Errorf("encode vocabulary: piece of %d bytes", len(p.Text))
		}
		le.PutUint64(scratch[:], math.Float64bits(p.Score))
		buf.Write(scratch[:])
		put16(uint16(len(p.Text)))
		buf.WriteString(p.Text)
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes(), nil
}

// decodeBundle parses a converted file's bytes after checking its checksum.
func decodeBundle(data []byte) (*bundle, error) {
	if len(data) < len(fileMagic)+sha256.Size || string(data[:len(fileMagic)]) != fileMagic {
		return nil, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	r := &reader{buf: body[len(fileMagic):]}
	b := &bundle{}
	nt := r.u32()
	for i := uint32(0); i < nt && r.err == nil; i++ {
		name := string(r.bytes(int(r.u16())))
		nd := int(r.u8())
		shape := make([]int, nd)
		n := 1
		for j := range shape {
			shape[j] = int(r.u32())
			n *= shape[j]
		}
		if r.err != nil || n < 0 || n > len(r.buf)/4 {
			return nil, fmt.Errorf("%w: tensor %q shape %v exceeds file", ErrCorrupt, name, shape)
		}
		raw := r.bytes(4 * n)
		vals := make([]float32, n)
		for j := range vals {
			vals[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
		}
		b.tensors = append(b.tensors, tensor{name: name, shape: shape, data: vals})
	}
	np := r.u32()
	if r.err == nil && int(np) > len(r.buf)/10 {
		return nil, fmt.Errorf("%w: vocabulary of %d pieces exceeds file", ErrCorrupt, np)
	}
	b.vocab = make([]Piece, 0, np)
	for i := uint32(0); i < np && r.err == nil; i++ {
		score := math.Float64frombits(r.u64())
		text := string(r.bytes(int(r.u16())))
		b.vocab = append(b.vocab, Piece{Text: text, Score: score})
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, r.err)
	}
	if len(r.buf) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(r.buf))
	}
	return b, nil
}

// reader reads little-endian values and remembers the first short read.
type reader struct {
	buf []byte
	err error
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.buf) {
		r.err = io.ErrUnexpectedEOF
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

func (r *reader) u8() uint8 {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed into place, so readers see either the old
// file or the complete new one.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("create temp file in %s: %w", dir, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmp, path, err)
	}
	return nil
}

// sortedNames returns the tensor names of b, sorted (for messages).
func (b *bundle) sortedNames() []string {
	names := make([]string, len(b.tensors))
	for i, t := range b.tensors {
		names[i] = t.name
	}
	slices.Sort(names)
	return names
}
