package palace

import (
	"bufio"
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

// wingMeta is the gob-encoded part of a wing file. Notes are pointers: a
// snapshot shares the wing's notes, which are never changed in place, and
// a load keeps the notes it decodes. gob encodes []*Note as it does []Note,
// so files read and written either way are the same format.
type wingMeta struct {
	ID        string
	Model     string
	Dim       int
	Roots     []string
	Sources   []Source
	Notes     []*Note
	VecIDs    []string // note ids of the vectors, in the order stored
	LastMined time.Time
}

// wingFile is where writeWing writes: a file it can fill in the header of
// last.
type wingFile interface {
	io.Writer
	io.WriterAt
}

// writeWing writes a wing file to f, which must be empty. Both parts are
// streamed through the checksum and the header is written last, so the
// file is never built in memory (gob holds only its encoding of the meta).
func writeWing(f wingFile, m *wingMeta, vecs [][]float32) error {
	for _, v := range vecs {
		if len(v) != m.Dim {
			return fmt.Errorf("encode wing %s: vector of %d dimensions in a %d-dimension wing", m.ID, len(v), m.Dim)
		}
	}
	if _, err := f.Write(make([]byte, wingHeaderLen)); err != nil {
		return err
	}
	h := sha256.New()
	body := &countingWriter{w: bufio.NewWriterSize(io.MultiWriter(f, h), 1<<16)}
	if err := gob.NewEncoder(body).Encode(m); err != nil {
		return fmt.Errorf("encode wing %s: %w", m.ID, err)
	}
	metaLen := body.n
	vb := make([]byte, 4*m.Dim)
	for _, v := range vecs {
		for i, x := range v {
			binary.LittleEndian.PutUint32(vb[4*i:], math.Float32bits(x))
		}
		if _, err := body.Write(vb); err != nil {
			return err
		}
	}
	if err := body.w.Flush(); err != nil {
		return err
	}
	header := make([]byte, wingHeaderLen)
	copy(header, wingMagic[:])
	binary.LittleEndian.PutUint64(header[8:], uint64(metaLen))
	binary.LittleEndian.PutUint64(header[16:], uint64(body.n-metaLen))
	copy(header[24:], h.Sum(nil))
	_, err := f.WriteAt(header, 0)
	return err
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// readWing reads the wing file at path, of at most limit bytes (palace
// files are ours, but a runaway file should not take the machine down).
// A first pass checks the checksum, so nothing is decoded from a damaged
// file, and a second decodes straight from the file: no copy of the whole
// file is held in memory.
func readWing(path string, limit int64) (*wingMeta, [][]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if info.Size() > limit {
		return nil, nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	var header [wingHeaderLen]byte
	if _, err := io.ReadFull(f, header[:]); err != nil || !bytes.Equal(header[:8], wingMagic[:]) {
		return nil, nil, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	metaLen := binary.LittleEndian.Uint64(header[8:])
	vecLen := binary.LittleEndian.Uint64(header[16:])
	bodyLen := uint64(info.Size() - wingHeaderLen)
	if metaLen > bodyLen || vecLen != bodyLen-metaLen {
		return nil, nil, fmt.Errorf("%w: %d bytes, header says %d (truncated?)", ErrCorrupt, bodyLen, metaLen+vecLen)
	}
	h := sha256.New()
	if n, err := io.Copy(h, io.NewSectionReader(f, wingHeaderLen, int64(bodyLen))); err != nil || uint64(n) != bodyLen {
		return nil, nil, fmt.Errorf("%w: read %d of %d bytes: %v", ErrCorrupt, n, bodyLen, err)
	}
	if !bytes.Equal(h.Sum(nil), header[24:56]) {
		return nil, nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	var m wingMeta
	meta := bufio.NewReaderSize(io.NewSectionReader(f, wingHeaderLen, int64(metaLen)), 1<<16)
	if err := gob.NewDecoder(meta).Decode(&m); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if m.Dim < 0 || (m.Dim == 0 && vecLen > 0) || (m.Dim > 0 && vecLen != 4*uint64(m.Dim)*uint64(len(m.VecIDs))) {
		return nil, nil, fmt.Errorf("%w: %d vector bytes for %d vectors of %d dimensions", ErrCorrupt, vecLen, len(m.VecIDs), m.Dim)
	}
	// One backing array for all vectors keeps the heap small and the GC quiet.
	all := make([]float32, vecLen/4)
	vr := io.NewSectionReader(f, wingHeaderLen+int64(metaLen), int64(vecLen))
	buf := make([]byte, 1<<16)
	for i := 0; i < len(all); {
		chunk := buf[:min(len(buf), 4*(len(all)-i))]
		if _, err := io.ReadFull(vr, chunk); err != nil {
			return nil, nil, fmt.Errorf("%w: read vectors: %v", ErrCorrupt, err)
		}
		for j := 0; j < len(chunk); j += 4 {
			all[i] = math.Float32frombits(binary.LittleEndian.Uint32(chunk[j:]))
			i++
		}
	}
	vecs := make([][]float32, len(m.VecIDs))
	for i := range vecs {
		vecs[i] = all[i*m.Dim : (i+1)*m.Dim : (i+1)*m.Dim]
	}
	return &m, vecs, nil
}
