package palace

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"io"
	"math"

	"github.com/memminer/memminer/palace/internal/wingfile"
)

// Version 2 wing files are no longer written, but still read: tests write
// them as earlier builds did.

// writeWing writes a version 2 wing file to f, which must be empty. Both parts are
// streamed through the checksum and the header is written last, so the
// file is never built in memory.
func writeWing(f wingfile.File, m *wingMeta, vecs [][]float32) error {
	for _, v := range vecs {
		if len(v) != m.Dim {
			return fmt.Errorf("encode wing %s: vector of %d dimensions in a %d-dimension wing", m.ID, len(v), m.Dim)
		}
	}
	if len(vecs) != len(m.VecIDs) {
		return fmt.Errorf("encode wing %s: %d vectors for %d vector ids", m.ID, len(vecs), len(m.VecIDs))
	}
	if _, err := f.Write(make([]byte, wingfile.StreamHeaderLen)); err != nil {
		return err
	}
	h := sha256.New()
	body := &countingWriter{w: bufio.NewWriterSize(io.MultiWriter(f, h), 1<<16)}
	if err := encodeMeta(gob.NewEncoder(body), m, true); err != nil {
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
	header := make([]byte, wingfile.StreamHeaderLen)
	copy(header, wingfile.Magic(2))
	binary.LittleEndian.PutUint64(header[8:], uint64(metaLen))
	binary.LittleEndian.PutUint64(header[16:], uint64(body.n-metaLen))
	copy(header[24:], h.Sum(nil))
	_, err := f.WriteAt(header, 0)
	return err
}
