package wingfile

import (
	"encoding/binary"
	"errors"
	"time"
)

// HeadWriter and HeadReader code the small head array of an index
// section (SecHead): the wing's fields and the tables notes refer to, as
// varints and length-prefixed strings.
type HeadWriter struct{ B []byte }

// Uint writes v as a uvarint.
func (w *HeadWriter) Uint(v uint64) { w.B = binary.AppendUvarint(w.B, v) }

// Int writes v as a varint.
func (w *HeadWriter) Int(v int64) { w.B = binary.AppendVarint(w.B, v) }

// Str writes s, its length first.
func (w *HeadWriter) Str(s string) { w.Uint(uint64(len(s))); w.B = append(w.B, s...) }

// Time writes t in its binary form (its instant and zone offset).
func (w *HeadWriter) Time(t time.Time) {
	b, err := t.MarshalBinary()
	if err != nil { // a zone offset that is not whole minutes: keep the instant
		b, _ = t.UTC().MarshalBinary()
	}
	w.Uint(uint64(len(b)))
	w.B = append(w.B, b...)
}

// HeadReader reads what a HeadWriter wrote. After the first failure every
// read returns zero, and Err says what failed.
type HeadReader struct {
	B   []byte
	Err error
}

func (r *HeadReader) fail() {
	if r.Err == nil {
		r.Err = errors.New("index head truncated")
	}
	r.B = nil
}

// Uint reads a uvarint.
func (r *HeadReader) Uint() uint64 { return readVarint(r, binary.Uvarint) }

// Int reads a varint.
func (r *HeadReader) Int() int64 { return readVarint(r, binary.Varint) }

// readVarint reads one value with decode (binary.Uvarint or Varint).
func readVarint[T uint64 | int64](r *HeadReader, decode func([]byte) (T, int)) T {
	v, n := decode(r.B)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Bytes reads a length-prefixed run of bytes, in place.
func (r *HeadReader) Bytes() []byte {
	n := r.Uint()
	if n > uint64(len(r.B)) {
		r.fail()
		return nil
	}
	b := r.B[:n]
	r.B = r.B[n:]
	return b
}

// Str reads a string.
func (r *HeadReader) Str() string { return string(r.Bytes()) }

// Count reads a count of items of at least one byte each.
func (r *HeadReader) Count() int {
	n := r.Uint()
	if n > uint64(len(r.B)) {
		r.fail()
		return 0
	}
	return int(n)
}

// Time reads a time.
func (r *HeadReader) Time() time.Time {
	var t time.Time
	if b := r.Bytes(); r.Err == nil && t.UnmarshalBinary(b) != nil {
		r.Err = errors.New("index head: bad time")
	}
	return t
}
