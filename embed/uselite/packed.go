package uselite

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"time"
	"unsafe"

	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/mmapfile"
)

// The packed model file (model.bin.packed) is the converted file's
// bundle in the form the kernels read: every weight matrix also as its
// panels ("NAME#panels", see newMatrix) and as high and low bfloat16
// parts ("NAME#bf16", "NAME#bf16lo", see newBF16Matrix), and the timing
// signal computed ("timing#table"), each array at an offset that is a
// multiple of 64.
// Loading maps it and slices the arrays in place: no copy, no packing.
//
//	magic    [8]byte  "MMUSEP03"
//	ntensors uint32
//	ntensors × { namelen uint16, name, ndims uint8, dims [ndims]uint32,
//	             offset uint64, count uint64 }   count float32s at offset
//	npieces  uint32
//	npieces × { score float64, textlen uint16, text }
//	data
//
// It is made from the converted file after that file passed its SHA-256
// check, and model.bin.packed.json records the size and modification time
// both files had then. A load whose files still have them trusts the
// packed file without hashing 27 MB; any change (a new fetch, a damaged
// or replaced file) makes the next load check the converted file again
// and pack it anew.
const (
	packedMagic  = "MMUSEP03" // 02 had no #bf16lo: packed anew once
	packedSuffix = ".packed"
	recordSuffix = ".packed.json"
	panelsSuffix = "#panels"
	bf16Suffix   = "#bf16"
	bf16LoSuffix = "#bf16lo"
	timingTable  = "timing#table"
	packedAlign  = 64
)

// fileStamp is what a record keeps of a file.
type fileStamp struct {
	Size  int64     `json:"size"`
	Mtime time.Time `json:"mtime"`
}

func stampOf(path string) (fileStamp, error) {
	info, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{Size: info.Size(), Mtime: info.ModTime().UTC()}, nil
}

// packRecord is model.bin.packed.json.
type packRecord struct {
	Converted fileStamp `json:"converted"`
	Packed    fileStamp `json:"packed"`
	// Verified is when the converted file passed its checksum.
	Verified time.Time `json:"verified"`
}

// openPacked loads the packed file beside the converted file at path when
// the record says both are as they were checked; false when it cannot.
func openPacked(path string) (*Model, bool) {
	data, err := os.ReadFile(path + recordSuffix)
	if err != nil {
		return nil, false
	}
	var rec packRecord
	if json.Unmarshal(data, &rec) != nil {
		return nil, false
	}
	conv, err1 := stampOf(path)
	packed, err2 := stampOf(path + packedSuffix)
	if err1 != nil || err2 != nil || !conv.Mtime.Equal(rec.Converted.Mtime) || conv.Size != rec.Converted.Size ||
		!packed.Mtime.Equal(rec.Packed.Mtime) || packed.Size != rec.Packed.Size {
		return nil, false
	}
	f, err := os.Open(path + packedSuffix)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	mapped, release, err := mmapfile.Map(f, int(packed.Size))
	if err != nil {
		return nil, false
	}
	b, err := parsePacked(mapped)
	if err != nil {
		release()
		return nil, false
	}
	m, err := fromBundle(b)
	if err != nil {
		release()
		return nil, false
	}
	m.path = path
	// The network's arrays are the mapping's: it goes with the model.
	runtime.AddCleanup(m, func(release func()) { release() }, release)
	return m, true
}

// parsePacked reads a packed file's bundle, its arrays in place in data.
func parsePacked(data []byte) (*bundle, error) {
	// The head through the converted file's reader; the arrays in place.
	r := &reader{r: bytes.NewReader(data), left: int64(len(data))}
	if !littleEndian {
		return nil, errors.New("packed file is little-endian, this machine is not")
	}
	if string(r.bytes(len(packedMagic))) != packedMagic {
		return nil, errors.New("bad header")
	}
	b := &bundle{}
	nt := r.u32()
	for i := uint32(0); i < nt && r.err == nil; i++ {
		name := string(r.bytes(int(r.u16())))
		shape := make([]int, r.u8())
		for j := range shape {
			shape[j] = int(r.u32())
		}
		off, count := r.u64(), r.u64()
		if r.err != nil || off%packedAlign != 0 || off > uint64(len(data)) || count > (uint64(len(data))-off)/4 {
			return nil, fmt.Errorf("tensor %q out of the file", name)
		}
		var vals []float32
		if count > 0 {
			vals = unsafe.Slice((*float32)(unsafe.Pointer(&data[off])), count)
		}
		b.tensors = append(b.tensors, tensor{name: name, shape: shape, data: vals})
	}
	np := r.u32()
	for i := uint32(0); i < np && r.err == nil; i++ {
		score := math.Float64frombits(r.u64())
		b.vocab = append(b.vocab, Piece{Text: string(r.bytes(int(r.u16()))), Score: score})
	}
	return b, r.err
}

// writePacked writes the packed file of b, whose network is net, beside
// the converted file at path, and the record; best effort, as the cache
// may be read-only: a load that cannot pack still works.
func writePacked(path string, b *bundle, net *network, tok *Tokenizer, verified time.Time) error {
	tensors := append([]tensor{}, b.tensors...)
	for name, mat := range net.matrices() {
		tensors = append(tensors, tensor{name: name + panelsSuffix, shape: []int{mat.k, mat.n}, data: mat.data})
		// Written on every machine, so that the file is the same whatever
		// the CPU that packed it.
		bm := mat.bf
		if bm == nil {
			bm = newBF16Matrix(mat)
		}
		tensors = append(tensors, tensor{name: name + bf16Suffix, shape: []int{mat.k, mat.n}, data: asFloats(bm.data)},
			tensor{name: name + bf16LoSuffix, shape: []int{mat.k, mat.n}, data: asFloats(bm.lo)})
	}
	tensors = append(tensors, tensor{name: timingTable, shape: []int{net.maxLen, net.dEmb}, data: net.timing})
	tensors = append(tensors, tok.tensors()...)
	err := atomicfile.WriteFunc(path+packedSuffix, 0o644, func(f *os.File) error { return encodePacked(f, tensors, b.vocab) })
	if err != nil {
		return err
	}
	conv, err := stampOf(path)
	if err != nil {
		return err
	}
	packed, err := stampOf(path + packedSuffix)
	if err != nil {
		return err
	}
	rec, err := json.Marshal(packRecord{Converted: conv, Packed: packed, Verified: verified.UTC()})
	if err != nil {
		return err
	}
	return atomicfile.Write(path+recordSuffix, append(rec, '\n'), 0o644)
}

func encodePacked(w io.Writer, tensors []tensor, vocab []Piece) error {
	le := binary.LittleEndian
	var head []byte
	head = append(head, packedMagic...)
	head = le.AppendUint32(head, uint32(len(tensors)))
	// The head's size is known before the offsets: names, shapes and two
	// uint64s per tensor, then the vocabulary.
	size := len(head)
	for _, t := range tensors {
		size += 2 + len(t.name) + 1 + 4*len(t.shape) + 16
	}
	size += 4
	for _, p := range vocab {
		size += 8 + 2 + len(p.Text)
	}
	off := uint64(align(size))
	for _, t := range tensors {
		head = le.AppendUint16(head, uint16(len(t.name)))
		head = append(head, t.name...)
		head = append(head, byte(len(t.shape)))
		for _, d := range t.shape {
			head = le.AppendUint32(head, uint32(d))
		}
		head = le.AppendUint64(head, off)
		head = le.AppendUint64(head, uint64(len(t.data)))
		off = uint64(align(int(off) + 4*len(t.data)))
	}
	head = le.AppendUint32(head, uint32(len(vocab)))
	for _, p := range vocab {
		head = le.AppendUint64(head, math.Float64bits(p.Score))
		head = le.AppendUint16(head, uint16(len(p.Text)))
		head = append(head, p.Text...)
	}
	if len(head) != size {
		return fmt.Errorf("packed head of %d bytes, %d counted", len(head), size)
	}
	pos := len(head)
	pad := func() error {
		_, err := w.Write(make([]byte, align(pos)-pos))
		pos = align(pos)
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	for _, t := range tensors {
		if err := pad(); err != nil {
			return err
		}
		raw := make([]byte, 4*len(t.data))
		for i, v := range t.data {
			le.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		if _, err := w.Write(raw); err != nil {
			return err
		}
		pos += len(raw)
	}
	return nil
}

// The tokenizer's trie in a packed file: its arrays as float32 tensors
// of the same bytes.
const (
	trieKeys  = "tokenizer#keys"
	trieChild = "tokenizer#child"
	trieID    = "tokenizer#id"
	trieScore = "tokenizer#score"
)

// asFloats views the bytes of v as float32s.
func asFloats[T uint64 | int32 | float64 | uint16](v []T) []float32 {
	if len(v) == 0 {
		return nil
	}
	n := len(v) * int(unsafe.Sizeof(v[0])) / 4
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(v))), n)
}

// fromFloats views the bytes of f as Ts, false when they do not divide.
func fromFloats[T uint64 | int32 | float64 | uint16](f []float32) ([]T, bool) {
	var zero T
	if len(f) == 0 {
		return nil, true
	}
	if size := int(unsafe.Sizeof(zero)); size < 4 {
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(f))), len(f)*4/size), true
	}
	size := int(unsafe.Sizeof(zero)) / 4
	if len(f)%size != 0 {
		return nil, false
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(f))), len(f)/size), true
}

func (t *Tokenizer) tensors() []tensor {
	one := func(name string, d []float32) tensor { return tensor{name: name, shape: []int{len(d)}, data: d} }
	return []tensor{one(trieKeys, asFloats(t.keys)), one(trieChild, asFloats(t.child)), one(trieID, asFloats(t.id)), one(trieScore, asFloats(t.score))}
}

// packedTokenizer makes the tokenizer of a packed bundle's trie, false
// when it has none (a converted file) or a bad one.
func packedTokenizer(b *bundle) (*Tokenizer, bool) {
	get := func(name string) []float32 {
		t, _ := b.get(name)
		return t.data
	}
	keys, ok1 := fromFloats[uint64](get(trieKeys))
	child, ok2 := fromFloats[int32](get(trieChild))
	id, ok3 := fromFloats[int32](get(trieID))
	score, ok4 := fromFloats[float64](get(trieScore))
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, false
	}
	return newTokenizerFrom(b.vocab, keys, child, id, score)
}

func align(n int) int { return (n + packedAlign - 1) / packedAlign * packedAlign }
