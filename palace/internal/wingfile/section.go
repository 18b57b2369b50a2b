package wingfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"unsafe"
)

// The arrays of an index section, in the order of its table of contents.
const (
	SecHead = iota
	SecDocs
	SecDF
	SecListEnd
	SecListLast
	SecPost
	SecTermEnd
	SecTerms
	SecPrev
	SecNext
	SecRank
	SecMarked
	SecLine
	SecHeadIdx
	SecPlaceIdx
	SecGovIdx
	SecIDEnd
	SecStrEnd
	SecStrs
	SecStrCRC
	SecVecs
	SecHasVec
	SecStatus
	NumSecs
)

// TOCLen is the bytes of the table of contents: per array its offset
// (uint64), length and CRC (uint32 each; CRC-32C up to version 4, CRC-32
// from 5).
const TOCLen = NumSecs * 16

// StrBlock is the size of the blocks of the notes' strings that have a
// CRC of their own (SecStrCRC): a hit checks the block its note is in.
const StrBlock = 1 << 16

// Sections are the arrays of an index section, sliced from it, and their
// CRCs.
type Sections struct {
	Data [NumSecs][]byte
	CRC  [NumSecs]uint32
	// Table is the CRC's, by the file's version (CRCTable).
	Table *crc32.Table
}

// Split slices buf, an index section whose start is 8-aligned in memory,
// into its arrays.
func Split(buf []byte, table *crc32.Table) (*Sections, error) {
	a := &Sections{Table: table}
	if len(buf) < TOCLen {
		return nil, errors.New("index section too short")
	}
	for i := range NumSecs {
		off := binary.LittleEndian.Uint64(buf[i*16:])
		n := uint64(binary.LittleEndian.Uint32(buf[i*16+8:]))
		a.CRC[i] = binary.LittleEndian.Uint32(buf[i*16+12:])
		if off%8 != 0 || off < TOCLen || off > uint64(len(buf)) || n > uint64(len(buf))-off {
			return nil, fmt.Errorf("index array %d out of bounds", i)
		}
		a.Data[i] = buf[off : off+n : off+n]
	}
	return a, nil
}

// Check verifies the CRCs of the arrays secs.
func (a *Sections) Check(secs []int) error {
	for _, sec := range secs {
		if crc32.Checksum(a.Data[sec], a.Table) != a.CRC[sec] {
			return fmt.Errorf("%w: index array %d: checksum mismatch", ErrCorrupt, sec)
		}
	}
	return nil
}

// TOCChecks reports whether the table of contents at the start of idx, an
// index section, has the CRC crc (the header's).
func TOCChecks(idx []byte, crc uint32, table *crc32.Table) bool {
	return len(idx) >= TOCLen && crc32.Checksum(idx[:TOCLen], table) == crc
}

// littleEndian tells that arrays can be used in place: the file's
// integers are little-endian.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Int32s returns b as int32s: in place when the machine is little-endian,
// else a decoded copy.
func Int32s(b []byte) ([]int32, bool) {
	if len(b)%4 != 0 {
		return nil, false
	}
	if len(b) == 0 {
		return nil, true
	}
	if littleEndian {
		return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4), true
	}
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, true
}

// Uint32s returns b as uint32s, as Int32s does.
func Uint32s(b []byte) ([]uint32, bool) {
	v, ok := Int32s(b)
	if !ok || len(v) == 0 {
		return nil, ok
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(v))), len(v)), true
}

// Float32s returns b as float32s, as Int32s does.
func Float32s(b []byte) ([]float32, bool) {
	v, ok := Int32s(b)
	if !ok || len(v) == 0 {
		return nil, ok
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(v))), len(v)), true
}

// File is where a wing file is written: a file it can fill in the header
// of once the body is written.
type File interface {
	io.Writer
	io.WriterAt
}

// SectionWriter streams an index section: the table of contents, then
// each array at an offset that is a multiple of 8, through a CRC-32
// (IEEE). It keeps the CRC of the array being written, and for SecStrs
// of each StrBlock bytes of it (BlockCRCs). Most arrays are written four
// bytes at a time, the strings one note's id or text at a time, so the
// bytes are gathered in buf and summed when it is written out or the
// array ends (sum), not at each write.
type SectionWriter struct {
	out       io.Writer
	buf       []byte
	summed    int // buf[:summed] is in crc (and blockCRCs)
	n         int64
	err       error
	crc       uint32
	blocks    bool
	start     int64 // where the array being written starts
	blockCRCs []uint32
}

// WriteSections writes an index section to out, whose offset base is
// where it starts: array sec of lens[sec] bytes, written by write. It
// returns the section's length (a multiple of 8) and the CRC-32 of its
// table of contents, which holds those of the arrays.
func WriteSections(out File, base int64, lens [NumSecs]int64, write func(w *SectionWriter, sec int)) (int64, uint32, error) {
	w := &SectionWriter{out: out, buf: make([]byte, 0, 1<<16)}
	toc := make([]byte, TOCLen)
	w.Write(toc) // filled in last
	var crcs [NumSecs]uint32
	for sec := range NumSecs {
		w.pad()
		w.sum()
		w.crc, w.start, w.blocks = 0, w.n, sec == SecStrs
		binary.LittleEndian.PutUint64(toc[sec*16:], uint64(w.n))
		binary.LittleEndian.PutUint32(toc[sec*16+8:], uint32(lens[sec]))
		write(w, sec)
		w.sum()
		crcs[sec], w.blocks = w.crc, false
		if w.n-w.start != lens[sec] && w.err == nil {
			w.err = fmt.Errorf("index array %d of %d bytes, %d written", sec, lens[sec], w.n-w.start)
		}
	}
	w.pad()
	w.flush()
	if w.err != nil {
		return 0, 0, w.err
	}
	for sec := range NumSecs {
		binary.LittleEndian.PutUint32(toc[sec*16+12:], crcs[sec])
	}
	if _, err := out.WriteAt(toc, base); err != nil {
		return 0, 0, err
	}
	return w.n, crc32.ChecksumIEEE(toc), nil
}

// sum adds the bytes of buf not yet summed to crc, and with blocks set to
// the CRCs of the blocks they fall in.
func (w *SectionWriter) sum() {
	b := w.buf[w.summed:]
	w.crc = crc32.Update(w.crc, crc32.IEEETable, b)
	w.summed = len(w.buf)
	if !w.blocks {
		return
	}
	at := w.n - int64(len(b)) - w.start // b's offset in the array
	for len(b) > 0 {
		if at%StrBlock == 0 {
			w.blockCRCs = append(w.blockCRCs, 0)
		}
		k := min(len(b), int(StrBlock-at%StrBlock))
		last := &w.blockCRCs[len(w.blockCRCs)-1]
		*last = crc32.Update(*last, crc32.IEEETable, b[:k])
		at += int64(k)
		b = b[k:]
	}
}

// flush writes buf out.
func (w *SectionWriter) flush() {
	w.sum()
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.out.Write(w.buf)
	}
	w.buf, w.summed = w.buf[:0], 0
}

// room makes room for k more bytes in buf, false after an error.
func (w *SectionWriter) room(k int) bool {
	if len(w.buf)+k > cap(w.buf) {
		w.flush()
	}
	return w.err == nil
}

// Write writes b to the array being written.
func (w *SectionWriter) Write(b []byte) {
	for len(b) > 0 && w.room(1) {
		k := min(len(b), cap(w.buf)-len(w.buf))
		w.buf = append(w.buf, b[:k]...)
		w.n += int64(k)
		b = b[k:]
	}
}

// Str writes s, which is only read (not copied to bytes first).
func (w *SectionWriter) Str(s string) { w.Write(unsafe.Slice(unsafe.StringData(s), len(s))) }

// U32 writes v, little-endian.
func (w *SectionWriter) U32(v uint32) {
	if !w.room(4) {
		return
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, v)
	w.n += 4
}

// BlockCRCs are the CRCs of the StrBlock blocks of SecStrs written so far.
func (w *SectionWriter) BlockCRCs() []uint32 { return w.blockCRCs }

// pad writes zeros up to the next multiple of 8.
func (w *SectionWriter) pad() {
	for w.n%8 != 0 {
		w.Write([]byte{0})
	}
}
