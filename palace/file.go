package palace

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"
)

// A wing file is a small header, a gob of everything but the vectors, and
// the vectors as raw little-endian float32 (gob is slow for millions of
// floats). The SHA-256 in the header covers both parts, so truncation or a
// flipped byte is caught before anything is trusted.
//
//	magic [8]byte "MMWING\x00\x01"
//	metaLen, vecLen uint64
//	sum [32]byte
//	meta [metaLen]byte (gob of wingMeta)
//	vecs [vecLen]byte
var wingMagic = [8]byte{'M', 'M', 'W', 'I', 'N', 'G', 0, 1}

const wingHeaderLen = 8 + 8 + 8 + 32

// ErrCorrupt marks a palace file that failed its integrity check.
var ErrCorrupt = errors.New("corrupt palace file")

// wingMeta is the gob-encoded part of a wing file.
type wingMeta struct {
	ID        string
	Model     string
	Dim       int
	Roots     []string
	Sources   []Source
	Notes     []Note
	VecIDs    []string // note ids of the vectors, in the order stored
	LastMined time.Time
}

func encodeWing(m *wingMeta, vecs [][]float32) ([]byte, error) {
	var meta bytes.Buffer
	if err := gob.NewEncoder(&meta).Encode(m); err != nil {
		return nil, fmt.Errorf("encode wing %s: %w", m.ID, err)
	}
	vb := make([]byte, 4*m.Dim*len(vecs))
	off := 0
	for _, v := range vecs {
		if len(v) != m.Dim {
			return nil, fmt.Errorf("encode wing %s: vector of %d dimensions in a %d-dimension wing", m.ID, len(v), m.Dim)
		}
		for _, f := range v {
			binary.LittleEndian.PutUint32(vb[off:], math.Float32bits(f))
			off += 4
		}
	}
	h := sha256.New()
	h.Write(meta.Bytes())
	h.Write(vb)
	out := make([]byte, wingHeaderLen, wingHeaderLen+meta.Len()+len(vb))
	copy(out, wingMagic[:])
	binary.LittleEndian.PutUint64(out[8:], uint64(meta.Len()))
	binary.LittleEndian.PutUint64(out[16:], uint64(len(vb)))
	copy(out[24:], h.Sum(nil))
	out = append(out, meta.Bytes()...)
	out = append(out, vb...)
	return out, nil
}

func decodeWing(data []byte) (*wingMeta, [][]float32, error) {
	if len(data) < wingHeaderLen || !bytes.Equal(data[:8], wingMagic[:]) {
		return nil, nil, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	metaLen := binary.LittleEndian.Uint64(data[8:])
	vecLen := binary.LittleEndian.Uint64(data[16:])
	body := data[wingHeaderLen:]
	if metaLen > uint64(len(body)) || vecLen != uint64(len(body))-metaLen {
		return nil, nil, fmt.Errorf("%w: %d bytes, header says %d (truncated?)", ErrCorrupt, len(body), metaLen+vecLen)
	}
	sum := sha256.Sum256(body)
	if !bytes.Equal(sum[:], data[24:56]) {
		return nil, nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	var m wingMeta
	if err := gob.NewDecoder(bytes.NewReader(body[:metaLen])).Decode(&m); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	vb := body[metaLen:]
	if m.Dim < 0 || (m.Dim == 0 && len(vb) > 0) || (m.Dim > 0 && len(vb) != 4*m.Dim*len(m.VecIDs)) {
		return nil, nil, fmt.Errorf("%w: %d vector bytes for %d vectors of %d dimensions", ErrCorrupt, len(vb), len(m.VecIDs), m.Dim)
	}
	// One backing array for all vectors keeps the heap small and the GC quiet.
	all := make([]float32, len(vb)/4)
	for i := range all {
		all[i] = math.Float32frombits(binary.LittleEndian.Uint32(vb[4*i:]))
	}
	vecs := make([][]float32, len(m.VecIDs))
	for i := range vecs {
		vecs[i] = all[i*m.Dim : (i+1)*m.Dim : (i+1)*m.Dim]
	}
	return &m, vecs, nil
}

// readAllLimit reads a palace file; palace files are ours, but a runaway
// file should not take the machine down.
func readAllLimit(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}
