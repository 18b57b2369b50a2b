package wingfile

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

func TestVersionOf(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"MMWING\x00\x01", 1},
		{"MMWING\x00\x05rest of the file", 5},
		{"MMWING\x00\x00", 0},
		{"MMWING\x00\x06", 0},
		{"MMWING\x01\x05", 0},
		{"MMWING\x00", 0},
		{"garbage!", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := VersionOf([]byte(tt.in)); got != tt.want {
			t.Errorf("VersionOf(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// A header written reads back, and a file whose size disagrees with it,
// or that is cut short, is damaged.
func TestHeaders(t *testing.T) {
	h := Header{IdxLen: 16, MetaLen: 5, IdxCRC: 7, MetaSum: [32]byte{1, 2, 3}}
	b := h.Bytes()
	tests := []struct {
		name    string
		b       []byte
		n       int
		err     error
		size    int64
		ok      bool
		corrupt bool
	}{
		{"as written", b, HeaderLen, nil, HeaderLen + 21, true, false},
		{"truncated", b, HeaderLen, nil, HeaderLen + 20, true, true},
		{"longer", b, HeaderLen, nil, HeaderLen + 22, true, true},
		{"header cut short", b, 20, io.ErrUnexpectedEOF, 20, true, true},
		{"version 2", append(Magic(2), b[8:]...), HeaderLen, nil, HeaderLen + 21, false, false},
		{"shorter than a magic", b, 5, io.ErrUnexpectedEOF, 5, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := ParseHeader(tt.b, tt.n, tt.err, tt.size)
			if ok != tt.ok || errors.Is(err, ErrCorrupt) != tt.corrupt || err != nil && !tt.corrupt {
				t.Fatalf("ok %v, err %v; want ok %v, damaged %v", ok, err, tt.ok, tt.corrupt)
			}
			if ok && err == nil && (got.Version != Current || got.IdxLen != h.IdxLen || got.MetaLen != h.MetaLen || got.IdxCRC != h.IdxCRC || got.MetaSum != h.MetaSum) {
				t.Fatalf("read %+v, wrote %+v", got, h)
			}
		})
	}
}

func TestStreamHeaders(t *testing.T) {
	head := func(v int, metaLen, vecLen byte) []byte {
		b := make([]byte, StreamHeaderLen)
		copy(b, Magic(v))
		b[8], b[16] = metaLen, vecLen
		return b
	}
	tests := []struct {
		name    string
		b       []byte
		size    int64
		version int
		unknown bool
		corrupt bool
	}{
		{"version 1", head(1, 3, 4), StreamHeaderLen + 7, 1, false, false},
		{"version 2", head(2, 3, 4), StreamHeaderLen + 7, 2, false, false},
		{"truncated", head(2, 3, 4), StreamHeaderLen + 6, 0, false, true},
		{"header cut short", head(2, 3, 4)[:30], 30, 0, false, true},
		{"a later version", head(Current+1, 3, 4), StreamHeaderLen + 7, 0, true, true},
		{"no wing file", []byte("garbage"), 7, 0, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStreamHeader(tt.b, tt.size)
			var unknown *UnknownVersionError
			if errors.As(err, &unknown) != tt.unknown || errors.Is(err, ErrCorrupt) != tt.corrupt {
				t.Fatalf("err %v; want unknown version %v, damaged %v", err, tt.unknown, tt.corrupt)
			}
			if err == nil && (got.Version != tt.version || got.MetaLen != 3 || got.VecLen != 4) {
				t.Fatalf("read %+v", got)
			}
		})
	}
}

// The vector part of a version 2 file reads as the vectors the meta part
// counts, and a count or dimension that does not fill it exactly, however
// crafted to overflow, is damage rather than a read past its end.
func TestStreamVectors(t *testing.T) {
	vecs := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40} // 1, 2, 3, 4
	file := append(make([]byte, StreamHeaderLen+3), vecs...)
	h := StreamHeader{Version: 2, MetaLen: 3, VecLen: uint64(len(vecs))}
	tests := []struct {
		name   string
		n, dim int
		want   [][]float32
	}{
		{"two of two", 2, 2, [][]float32{{1, 2}, {3, 4}}},
		{"one of four", 1, 4, [][]float32{{1, 2, 3, 4}}},
		{"too few", 1, 2, nil},
		{"negative dimensions", -2, -2, nil},
		{"wrapping around", 1 << 62, 1 << 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.Vectors(bytes.NewReader(file), tt.n, tt.dim)
			if tt.want == nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("read %v, %v; want ErrCorrupt", got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("read %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
