package wingfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sync"
)

// ErrCorrupt marks a palace file that failed its integrity check.
var ErrCorrupt = errors.New("corrupt palace file")

// The versions read: Oldest to Current. Current is the one written.
const (
	Oldest  = 1
	Current = 5
)

// magic is the first 8 bytes of a wing file of version v: "MMWING\x00"
// and the version.
func magic(v int) [8]byte { return [8]byte{'M', 'M', 'W', 'I', 'N', 'G', 0, byte(v)} }

// Magic returns the first 8 bytes of a wing file of version v.
func Magic(v int) []byte {
	m := magic(v)
	return m[:]
}

// VersionOf returns the version of the wing file whose first bytes are
// b, 0 when b is no magic of a version this build reads (a file of a
// later build, or no wing file).
func VersionOf(b []byte) int {
	if len(b) < 8 || !bytes.Equal(b[:7], Magic(0)[:7]) {
		return 0
	}
	if v := int(b[7]); v >= Oldest && v <= Current {
		return v
	}
	return 0
}

// UnknownVersionError is a wing file whose magic is no version this build
// reads: a later build's, or no wing file. It is ErrCorrupt: the palace
// rebuilds such a wing from its markdown, in the current version.
type UnknownVersionError struct{ Magic []byte }

func (e *UnknownVersionError) Error() string { return ErrCorrupt.Error() + ": bad header" }

// Is makes the error match ErrCorrupt.
func (e *UnknownVersionError) Is(target error) bool { return target == ErrCorrupt }

// castagnoli is the CRC-32C table of versions 3 and 4, made when one is
// first read: Go's tables of it took 0.13 ms to make on amd64, in every
// command that read a wing, which is why version 5 is CRC-32 (IEEE).
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// CRCTable returns the table of the CRCs of version v's index section,
// nil for a version without one (1 and 2, whose files a SHA-256 covers).
func CRCTable(v int) *crc32.Table {
	switch v {
	case 5:
		return crc32.IEEETable
	case 3, 4:
		return castagnoli()
	}
	return nil
}

// HeaderLen is the length of the header of versions 3 to 5:
//
//	magic [8]byte "MMWING\x00\x03" (\x04, \x05)
//	idxLen, metaLen uint64
//	idxCRC uint32         CRC of idx's table of contents
//	pad uint32
//	metaSum [32]byte      SHA-256 of meta
//	idx [idxLen]byte      the index section, padded to a multiple of 8
//	meta [metaLen]byte
const HeaderLen = 64

// Header is the header of a file of versions 3 to 5.
type Header struct {
	Version         int
	IdxLen, MetaLen uint64
	IdxCRC          uint32
	MetaSum         [32]byte
}

// ParseHeader reads the header of a file of versions 3 to 5 of size
// bytes from b, which holds the file's first n bytes (read with err):
// ok is false when the file is of none of those versions, and the error
// says why a file of one of them is damaged.
func ParseHeader(b []byte, n int, err error, size int64) (h Header, ok bool, _ error) {
	h.Version = VersionOf(b[:min(n, 8)])
	if h.Version < 3 {
		return Header{}, false, nil
	}
	if err != nil || n < HeaderLen {
		return Header{}, true, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	h.IdxLen = binary.LittleEndian.Uint64(b[8:])
	h.MetaLen = binary.LittleEndian.Uint64(b[16:])
	h.IdxCRC = binary.LittleEndian.Uint32(b[24:])
	copy(h.MetaSum[:], b[32:64])
	body := uint64(size - HeaderLen)
	if h.IdxLen%8 != 0 || h.IdxLen > body || h.MetaLen != body-h.IdxLen {
		return Header{}, true, fmt.Errorf("%w: %d bytes, header says %d (truncated?)", ErrCorrupt, body, h.IdxLen+h.MetaLen)
	}
	return h, true, nil
}

// Bytes is the header as the current version writes it.
func (h Header) Bytes() []byte {
	b := make([]byte, HeaderLen)
	copy(b, Magic(Current))
	binary.LittleEndian.PutUint64(b[8:], h.IdxLen)
	binary.LittleEndian.PutUint64(b[16:], h.MetaLen)
	binary.LittleEndian.PutUint32(b[24:], h.IdxCRC)
	copy(b[32:], h.MetaSum[:])
	return b
}

// StreamHeaderLen is the length of the header of versions 1 and 2:
//
//	magic [8]byte "MMWING\x00\x01" (\x02)
//	metaLen, vecLen uint64
//	sum [32]byte          SHA-256 of meta and vecs
//	meta [metaLen]byte    gob
//	vecs [vecLen]byte     little-endian float32
const StreamHeaderLen = 8 + 8 + 8 + 32

// StreamHeader is the header of a file of versions 1 and 2.
type StreamHeader struct {
	Version         int
	MetaLen, VecLen uint64
	Sum             [32]byte
}

// ParseStreamHeader reads the header of a file of versions 1 and 2 of
// size bytes from b, its first StreamHeaderLen bytes or as many as it
// has. A file of another version is an UnknownVersionError.
func ParseStreamHeader(b []byte, size int64) (StreamHeader, error) {
	v := VersionOf(b)
	if v != 1 && v != 2 {
		return StreamHeader{}, &UnknownVersionError{Magic: bytes.Clone(b[:min(len(b), 8)])}
	}
	if len(b) < StreamHeaderLen {
		return StreamHeader{}, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	h := StreamHeader{Version: v, MetaLen: binary.LittleEndian.Uint64(b[8:]), VecLen: binary.LittleEndian.Uint64(b[16:])}
	copy(h.Sum[:], b[24:56])
	body := uint64(size - StreamHeaderLen)
	if h.MetaLen > body || h.VecLen != body-h.MetaLen {
		return StreamHeader{}, fmt.Errorf("%w: %d bytes, header says %d (truncated?)", ErrCorrupt, body, h.MetaLen+h.VecLen)
	}
	return h, nil
}

// Check verifies the SHA-256 of the body of f, a file of versions 1 and 2
// with header h, so that nothing is decoded from a damaged file.
func (h StreamHeader) Check(f io.ReaderAt) error {
	bodyLen := h.MetaLen + h.VecLen
	sum := sha256.New()
	if n, err := io.Copy(sum, io.NewSectionReader(f, StreamHeaderLen, int64(bodyLen))); err != nil || uint64(n) != bodyLen {
		return fmt.Errorf("%w: read %d of %d bytes: %v", ErrCorrupt, n, bodyLen, err)
	}
	if !bytes.Equal(sum.Sum(nil), h.Sum[:]) {
		return fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	return nil
}

// Meta is the meta part of f, a file of versions 1 and 2 with header h.
func (h StreamHeader) Meta(f io.ReaderAt) *io.SectionReader {
	return io.NewSectionReader(f, StreamHeaderLen, int64(h.MetaLen))
}

// Vectors reads the vector part of f, a file of versions 1 and 2 with
// header h, as n vectors of dim float32s (the meta part says how many),
// all in one backing array, which keeps the heap small and the GC quiet.
func (h StreamHeader) Vectors(f io.ReaderAt, n, dim int) ([][]float32, error) {
	if !vectorsFill(h.VecLen, dim, n) {
		return nil, fmt.Errorf("%w: %d vector bytes for %d vectors of %d dimensions", ErrCorrupt, h.VecLen, n, dim)
	}
	all := make([]float32, h.VecLen/4)
	vr := io.NewSectionReader(f, StreamHeaderLen+int64(h.MetaLen), int64(h.VecLen))
	buf := make([]byte, 1<<16)
	for i := 0; i < len(all); {
		chunk := buf[:min(len(buf), 4*(len(all)-i))]
		if _, err := io.ReadFull(vr, chunk); err != nil {
			return nil, fmt.Errorf("%w: read vectors: %v", ErrCorrupt, err)
		}
		for j := 0; j < len(chunk); j += 4 {
			all[i] = math.Float32frombits(binary.LittleEndian.Uint32(chunk[j:]))
			i++
		}
	}
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = all[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return vecs, nil
}

// vectorsFill reports whether vecLen bytes are n vectors of dim float32s.
// It multiplies nothing, which could overflow: a crafted dim or n whose
// product wrapped around to vecLen would have the vectors sliced past
// their end.
func vectorsFill(vecLen uint64, dim, n int) bool {
	switch {
	case dim < 0 || n < 0:
		return false
	case dim == 0 || n == 0:
		return vecLen == 0
	}
	floats := vecLen / 4
	return vecLen%4 == 0 && floats%uint64(n) == 0 && floats/uint64(n) == uint64(dim)
}
