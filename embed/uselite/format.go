package uselite

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"unsafe"
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

// decodeBundle parses a converted file's bytes (tests and small files).
func decodeBundle(data []byte) (*bundle, error) {
	return readBundle(bytes.NewReader(data), int64(len(data)))
}

// readBundle parses a converted file of the given size from r, reading the
// weights straight into their final arrays and checking the checksum as it
// goes, so that loading needs no second copy of the file in memory.
func readBundle(r io.Reader, size int64) (*bundle, error) {
	if size < int64(len(fileMagic)+sha256.Size) {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, size)
	}
	h := sha256.New()
	br := &reader{r: io.TeeReader(bufio.NewReaderSize(io.LimitReader(r, size-sha256.Size), 1<<16), h), left: size - sha256.Size}
	if string(br.bytes(len(fileMagic))) != fileMagic {
		return nil, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	b := &bundle{}
	nt := br.u32()
	for i := uint32(0); i < nt && br.err == nil; i++ {
		name := string(br.bytes(int(br.u16())))
		nd := int(br.u8())
		shape := make([]int, nd)
		n := int64(1)
		for j := range shape {
			shape[j] = int(br.u32())
			n *= int64(shape[j])
		}
		if br.err != nil || 4*n > br.left {
			return nil, fmt.Errorf("%w: tensor %q shape %v exceeds file", ErrCorrupt, name, shape)
		}
		vals := make([]float32, n)
		br.floats(vals)
		b.tensors = append(b.tensors, tensor{name: name, shape: shape, data: vals})
	}
	np := br.u32()
	if br.err == nil && int64(np)*10 > br.left {
		return nil, fmt.Errorf("%w: vocabulary of %d pieces exceeds file", ErrCorrupt, np)
	}
	b.vocab = make([]Piece, 0, np)
	for i := uint32(0); i < np && br.err == nil; i++ {
		score := math.Float64frombits(br.u64())
		text := string(br.bytes(int(br.u16())))
		b.vocab = append(b.vocab, Piece{Text: text, Score: score})
	}
	if br.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, br.err)
	}
	if br.left != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the vocabulary", ErrCorrupt, br.left)
	}
	var sum [sha256.Size]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return nil, fmt.Errorf("%w: read checksum: %w", ErrCorrupt, err)
	}
	if !bytes.Equal(h.Sum(nil), sum[:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	return b, nil
}

// reader reads little-endian values from the file body and remembers the
// first error; left is how many body bytes remain.
type reader struct {
	r       io.Reader
	left    int64
	err     error
	scratch [8]byte
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || int64(n) > r.left {
		r.err = io.ErrUnexpectedEOF
		return nil
	}
	var buf []byte
	if n > len(r.scratch) {
		buf = make([]byte, n)
	} else {
		buf = r.scratch[:n]
	}
	if _, err := io.ReadFull(r.r, buf); err != nil {
		r.err = err
		return nil
	}
	r.left -= int64(n)
	return buf
}

// floats fills dst with little-endian float32 values.
func (r *reader) floats(dst []float32) {
	if r.err != nil || len(dst) == 0 {
		return
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 4*len(dst))
	if int64(len(raw)) > r.left {
		r.err = io.ErrUnexpectedEOF
		return
	}
	if _, err := io.ReadFull(r.r, raw); err != nil {
		r.err = err
		return
	}
	r.left -= int64(len(raw))
	if !littleEndian {
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
}

// littleEndian reports whether float32 values sit in memory in file order.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

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

// readBundleFile reads and checks the converted file at path.
func readBundleFile(path string) (*bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read model: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read model: %w", err)
	}
	b, err := readBundle(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("load model %s: %w", path, err)
	}
	return b, nil
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
