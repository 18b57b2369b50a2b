package palace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"math"
	"os"
	"reflect"
	"time"
)

// Wing file version 2, which earlier builds wrote and which is still read
// (version 3, which is written, is in wingfile.go). A version 2 file is a
// small header, the wing's notes and sources as a stream
// of gob messages, and the vectors as raw little-endian float32 (gob is
// slow for millions of floats). The SHA-256 in the header covers both
// parts, so truncation or a flipped byte is caught before anything is
// decoded.
//
//	magic [8]byte "MMWING\x00\x02"
//	metaLen, vecLen uint64
//	sum [32]byte
//	meta [metaLen]byte, one gob stream of:
//	    wingHead
//	    noteBatch...                         the notes, sorted (compareStored)
//	    for each source, sorted by path:
//	        sourceHead, idBatch...           its NoteIDs
//	        for each earlier version:
//	            versionHead, versionBatch...
//	    idBatch...                           the note ids of the vectors
//	vecs [vecLen]byte
//
// No message holds more than one batch (batchLen items, about batchBytes
// of text), so neither a write nor a read holds the wing encoded whole.
// Note ids are indexes into the notes, and a note of an earlier version
// the index of a current note of its file with the same heading and text
// where there is one, both coded as differences (refCoder): an earlier
// version costs about two bytes a note, and its changes. Version 1
// ("MMWING\x00\x01", the meta part one gob of wingMeta) is still read too;
// both are written as version 3 at their wing's next write. Version 3's
// meta part is this stream without the notes (encodeMeta).
var (
	wingMagic   = [8]byte{'M', 'M', 'W', 'I', 'N', 'G', 0, 2}
	wingMagicV1 = [8]byte{'M', 'M', 'W', 'I', 'N', 'G', 0, 1}
)

const (
	wingHeaderLen = 8 + 8 + 8 + 32
	batchLen      = 2048
	batchBytes    = 1 << 20
)

// ErrCorrupt marks a palace file that failed its integrity check.
var ErrCorrupt = errors.New("corrupt palace file")

// wingMeta is everything a wing file holds but the vectors, as writeWing
// takes it and readWing returns it. Notes are stored notes: a snapshot
// shares the wing's, which are never changed in place, and a load makes
// each batch of notes it decodes stored notes at once, so it never holds
// the wing's notes as Notes.
type wingMeta struct {
	ID        string
	Model     string
	Dim       int
	Roots     []string
	Sources   []Source
	Notes     []*storedNote
	VecIDs    []string // note ids of the vectors, in the order stored
	LastMined time.Time
}

// wingMetaV1 is the meta part of a version 1 wing file. gob decodes
// []*Note as []Note, so files written before notes were pointers read
// the same.
type wingMetaV1 struct {
	ID        string
	Model     string
	Dim       int
	Roots     []string
	Sources   []Source
	Notes     []*Note
	VecIDs    []string
	LastMined time.Time
}

// wingHead opens the meta stream: the wing, and how many notes, sources
// and vector ids follow.
type wingHead struct {
	ID        string
	Model     string
	Dim       int
	Roots     []string
	LastMined time.Time
	Notes     int
	Sources   int
	Vectors   int
}

// noteBatch is a batch of notes. Same has a byte of flags per note for
// the strings it has in common with the note before it (in the stream),
// which are left out: the notes are sorted by source and line, so most
// share their wing, agent, source and heading path with the one before.
type noteBatch struct {
	Notes []*Note
	Same  []byte
}

const (
	sameWing = 1 << iota
	sameAgent
	sameSource
	sameHeading
)

// elide leaves out of n, a copy, the strings it has in common with prev,
// and returns their flags.
func elide(n, prev *Note) byte {
	var same byte
	if n.Wing != "" && n.Wing == prev.Wing {
		n.Wing, same = "", same|sameWing
	}
	if n.Agent != "" && n.Agent == prev.Agent {
		n.Agent, same = "", same|sameAgent
	}
	if n.Source != "" && n.Source == prev.Source {
		n.Source, same = "", same|sameSource
	}
	if n.Heading != "" && n.Heading == prev.Heading {
		n.Heading, same = "", same|sameHeading
	}
	return same
}

// restore gives n the strings that same says it has in common with prev,
// and reports whether they were left out.
func restore(n, prev *Note, same byte) bool {
	take := func(bit byte, s *string, from string) bool {
		if same&bit == 0 {
			return true
		}
		ok := *s == ""
		*s = from
		return ok
	}
	return same < sameHeading<<1 &&
		take(sameWing, &n.Wing, prev.Wing) && take(sameAgent, &n.Agent, prev.Agent) &&
		take(sameSource, &n.Source, prev.Source) && take(sameHeading, &n.Heading, prev.Heading)
}

// idBatch is a batch of note ids. Most are the ids of notes, which Deltas
// gives by their indexes (refCoder); the ids no note has are IDs, at the
// places in the batch that Missing lists.
type idBatch struct {
	Deltas  []int
	Missing []int
	IDs     []string
}

// sourceHead is a source without its NoteIDs and Earlier, which follow
// it: NoteIDs ids, then Earlier versions.
type sourceHead struct {
	Source  Source
	NoteIDs int
	Earlier int
}

// versionHead is an earlier version without its notes, Notes of which
// follow it.
type versionHead struct {
	Version Version
	Notes   int
}

// versionBatch is a batch of an earlier version's notes. Those with the
// heading and text of a current note of the file are given by that note's
// index (Deltas, refCoder) and their line less its line (Shifts); the rest
// are Inline, at the places in the batch that InlineAt lists.
type versionBatch struct {
	Deltas   []int
	Shifts   []int
	InlineAt []int
	Inline   []VersionNote
}

// refCoder codes a run of indexes of notes as the difference of each from
// the index after the one before it: the notes of a file, in order, are
// a run of zeros, a byte each.
type refCoder struct{ prev int }

func newRefCoder() refCoder { return refCoder{prev: -1} }

func (c *refCoder) put(i int) int {
	d := i - c.prev - 1
	c.prev = i
	return d
}

// get returns the index d codes, and false if it is not one of n notes.
func (c *refCoder) get(d, n int) (int, bool) {
	i := c.prev + 1 + d
	if i < 0 || i >= n {
		return 0, false
	}
	c.prev = i
	return i, true
}

// wingFile is where writeWing writes: a file it can fill in the header of
// last.
type wingFile interface {
	io.Writer
	io.WriterAt
}

// encodeMeta writes m as the meta stream of a version 2 wing file, or
// without the notes (withNotes false) as that of version 3, whose notes
// are in its index section.
func encodeMeta(enc *gob.Encoder, m *wingMeta, withNotes bool) error {
	index := make(map[string]int, len(m.Notes)) // note id → its index
	for i, n := range m.Notes {
		index[n.id] = i
	}
	head := wingHead{ID: m.ID, Model: m.Model, Dim: m.Dim, Roots: m.Roots, LastMined: m.LastMined,
		Notes: len(m.Notes), Sources: len(m.Sources), Vectors: len(m.VecIDs)}
	if err := enc.Encode(&head); err != nil {
		return err
	}
	// The batch's notes are made of the stored ones a batch at a time, and
	// strings are left out of them.
	copies := make([]Note, batchLen)
	out := noteBatch{Notes: make([]*Note, batchLen), Same: make([]byte, batchLen)}
	var prev Note
	for b := range batches(m.Notes, func(n *storedNote) int { return len(n.heading.Value()) + len(n.text) }) {
		if !withNotes {
			break
		}
		out.Notes, out.Same = out.Notes[:len(b)], out.Same[:len(b)]
		for i, n := range b {
			whole := n.view()
			copies[i] = whole
			out.Notes[i] = &copies[i]
			out.Same[i] = elide(&copies[i], &prev)
			prev = whole
		}
		if err := enc.Encode(&out); err != nil {
			return err
		}
	}
	for i := range m.Sources {
		s := &m.Sources[i]
		head := sourceHead{Source: *s, NoteIDs: len(s.NoteIDs), Earlier: len(s.Earlier)}
		head.Source.NoteIDs, head.Source.Earlier = nil, nil
		if err := enc.Encode(&head); err != nil {
			return err
		}
		if err := encodeIDs(enc, index, s.NoteIDs); err != nil {
			return err
		}
		if len(s.Earlier) == 0 {
			continue
		}
		same := newSameNotes(m.Notes, index, s.NoteIDs)
		var out versionBatch // reused, as in encodeIDs
		for _, v := range s.Earlier {
			head := versionHead{Version: v, Notes: len(v.Notes)}
			head.Version.Notes = nil
			if err := enc.Encode(&head); err != nil {
				return err
			}
			for b := range batches(v.Notes, func(n VersionNote) int { return len(n.Heading) + len(n.Text) }) {
				out = versionBatch{Deltas: out.Deltas[:0], Shifts: out.Shifts[:0], InlineAt: out.InlineAt[:0], Inline: out.Inline[:0]}
				refs := newRefCoder()
				for j, n := range b {
					if i, ok := same.find(m.Notes, n); ok {
						out.Deltas = append(out.Deltas, refs.put(i))
						out.Shifts = append(out.Shifts, n.Line-int(m.Notes[i].line))
					} else {
						out.InlineAt = append(out.InlineAt, j)
						out.Inline = append(out.Inline, n)
					}
				}
				if err := enc.Encode(&out); err != nil {
					return err
				}
			}
		}
	}
	return encodeIDs(enc, index, m.VecIDs)
}

// encodeIDs writes note ids as idBatches.
func encodeIDs(enc *gob.Encoder, index map[string]int, ids []string) error {
	var out idBatch // reused: Encode is done with it when it returns
	for b := range batches(ids, func(id string) int { return len(id) }) {
		out = idBatch{Deltas: out.Deltas[:0], Missing: out.Missing[:0], IDs: out.IDs[:0]}
		refs := newRefCoder()
		for j, id := range b {
			if i, ok := index[id]; ok {
				out.Deltas = append(out.Deltas, refs.put(i))
			} else {
				out.Missing = append(out.Missing, j)
				out.IDs = append(out.IDs, id)
			}
		}
		if err := enc.Encode(&out); err != nil {
			return err
		}
	}
	return nil
}

// batches cuts items into batches of at most batchLen items and, unless
// one item is larger, about batchBytes as size counts them.
func batches[T any](items []T, size func(T) int) iter.Seq[[]T] {
	return func(yield func([]T) bool) {
		for len(items) > 0 {
			n, total := 0, 0
			for n < len(items) && n < batchLen && (n == 0 || total < batchBytes) {
				total += size(items[n])
				n++
			}
			if !yield(items[:n]) {
				return
			}
			items = items[n:]
		}
	}
}

// sameNotes finds the current note of a file with the heading and text of
// a note of one of its earlier versions. It keys the notes by a hash of
// both (a map of the strings would take about as much memory as their
// headers), and find checks the strings.
type sameNotes struct {
	seed  maphash.Seed
	index map[uint64]int // hash of heading and text → index among the notes
}

func newSameNotes(notes []*storedNote, index map[string]int, ids []string) sameNotes {
	s := sameNotes{seed: maphash.MakeSeed(), index: make(map[uint64]int, len(ids))}
	for _, id := range ids {
		if i, ok := index[id]; ok {
			s.index[s.key(notes[i].heading.Value(), notes[i].text)] = i
		}
	}
	return s
}

func (s sameNotes) key(heading, text string) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	h.WriteString(heading)
	h.WriteByte(0)
	h.WriteString(text)
	return h.Sum64()
}

// find returns the index of the note with n's heading and text.
func (s sameNotes) find(notes []*storedNote, n VersionNote) (int, bool) {
	i, ok := s.index[s.key(n.Heading, n.Text)]
	return i, ok && notes[i].heading.Value() == n.Heading && notes[i].text == n.Text
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
// file is held in memory. The strings that repeat from note to note are
// shared (storer for the notes, interner for the sources).
func readWing(path string, limit int64) (*wingMeta, [][]float32, error) {
	if v, err := openWing(path, limit, nil); err != nil || v != nil {
		if err != nil {
			return nil, nil, err
		}
		defer v.f.Close()
		return v.wingMeta()
	}
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
	if _, err := io.ReadFull(f, header[:]); err != nil {
		return nil, nil, fmt.Errorf("%w: bad header", ErrCorrupt)
	}
	v1 := bytes.Equal(header[:8], wingMagicV1[:])
	if !v1 && !bytes.Equal(header[:8], wingMagic[:]) {
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
	meta := bufio.NewReaderSize(io.NewSectionReader(f, wingHeaderLen, int64(metaLen)), 1<<16)
	var m *wingMeta
	if v1 {
		m, err = decodeMetaV1(meta)
	} else {
		m, err = decodeMeta(meta, int(min(metaLen, math.MaxInt32)))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if !vectorsFill(vecLen, m.Dim, len(m.VecIDs)) {
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
	return m, vecs, nil
}

// vectorsFill reports whether vecLen bytes are n vectors of dim float32s.
// It multiplies nothing that could overflow: a crafted dim whose product
// wrapped around to vecLen would have the vectors sliced past their end.
func vectorsFill(vecLen uint64, dim, n int) bool {
	switch {
	case dim < 0:
		return false
	case dim == 0 || n == 0:
		return vecLen == 0
	}
	per := 4 * uint64(n) // bytes of one dimension of every vector
	return vecLen%per == 0 && vecLen/per == uint64(dim)
}

// decodeMetaV1 decodes the meta part of a version 1 wing file.
func decodeMetaV1(r io.Reader) (*wingMeta, error) {
	var v1 wingMetaV1
	if err := gob.NewDecoder(r).Decode(&v1); err != nil {
		return nil, err
	}
	m := &wingMeta{ID: v1.ID, Model: v1.Model, Dim: v1.Dim, Roots: v1.Roots, Sources: v1.Sources,
		Notes: make([]*storedNote, len(v1.Notes)), VecIDs: v1.VecIDs, LastMined: v1.LastMined}
	var st storer
	for i, n := range v1.Notes {
		m.Notes[i] = st.store(n)
	}
	newInterner().sourcesV1(m.Sources, m.Notes)
	return m, nil
}

// decodeMeta decodes the meta stream of a version 2 wing file of limit
// bytes, which bounds every count it holds (each item takes a byte at
// least).
func decodeMeta(r io.Reader, limit int) (*wingMeta, error) { return decodeMetaWith(r, limit, nil) }

// decodeMetaWith is decodeMeta of a stream whose notes are given (version
// 3) when notes is not nil.
func decodeMetaWith(r io.Reader, limit int, given []*storedNote) (*wingMeta, error) {
	dec := gob.NewDecoder(r)
	var head wingHead
	if err := dec.Decode(&head); err != nil {
		return nil, err
	}
	if given != nil && head.Notes != len(given) {
		return nil, fmt.Errorf("wing head counts %d notes, its index %d", head.Notes, len(given))
	}
	if !counts(limit, head.Sources, head.Vectors) || given == nil && !counts(limit, head.Notes) {
		return nil, fmt.Errorf("wing head counts %d notes, %d sources, %d vectors in %d bytes", head.Notes, head.Sources, head.Vectors, limit)
	}
	m := &wingMeta{ID: head.ID, Model: head.Model, Dim: head.Dim, Roots: head.Roots, LastMined: head.LastMined}
	in := newInterner()
	var st storer
	if m.Notes = given; given == nil {
		m.Notes = makeFor[*storedNote](head.Notes, limit)
	}
	// The batch is decoded into again, its notes too, so the wing's notes
	// are not each allocated as a Note before they are stored; gob leaves
	// out zero fields, so they are zeroed first.
	var b noteBatch
	var prev Note
	for len(m.Notes) < head.Notes {
		for _, n := range b.Notes {
			*n = Note{}
		}
		b.Notes, b.Same = b.Notes[:0], b.Same[:0]
		if err := decodeBatch(dec, &b, head.Notes-len(m.Notes)); err != nil {
			return nil, fmt.Errorf("notes: %w", err)
		}
		if len(b.Same) != len(b.Notes) {
			return nil, fmt.Errorf("notes: %d flags for %d notes", len(b.Same), len(b.Notes))
		}
		for i, n := range b.Notes {
			if !restore(n, &prev, b.Same[i]) {
				return nil, fmt.Errorf("note %s: bad flags %#x", n.ID, b.Same[i])
			}
			m.Notes = append(m.Notes, st.store(n))
			prev = *n
		}
	}
	m.Sources = makeFor[Source](head.Sources, limit)
	for range head.Sources {
		s, err := decodeSource(dec, m.Notes, in, limit)
		if err != nil {
			return nil, err
		}
		m.Sources = append(m.Sources, s)
	}
	var err error
	if m.VecIDs, err = decodeIDs(dec, m.Notes, head.Vectors, limit); err != nil {
		return nil, fmt.Errorf("vector ids: %w", err)
	}
	if err := dec.DecodeValue(reflect.Value{}); err == nil {
		return nil, errors.New("data after the wing's last part")
	} else if err != io.EOF {
		return nil, err
	}
	return m, nil
}

// decodeSource decodes a sourceHead and what follows it.
func decodeSource(dec *gob.Decoder, notes []*storedNote, in interner, limit int) (Source, error) {
	var head sourceHead
	if err := dec.Decode(&head); err != nil {
		return Source{}, fmt.Errorf("source: %w", err)
	}
	s := head.Source
	if !counts(limit, head.NoteIDs, head.Earlier) || s.NoteIDs != nil || s.Earlier != nil {
		return Source{}, fmt.Errorf("source %s: bad head", s.Path)
	}
	s.Path, s.Agent = in.of(s.Path), in.of(s.Agent)
	var err error
	if s.NoteIDs, err = decodeIDs(dec, notes, head.NoteIDs, limit); err != nil {
		return Source{}, fmt.Errorf("source %s: note ids: %w", s.Path, err)
	}
	s.Earlier = makeFor[Version](head.Earlier, limit)
	for range head.Earlier {
		var vh versionHead
		if err := dec.Decode(&vh); err != nil {
			return Source{}, fmt.Errorf("source %s: version: %w", s.Path, err)
		}
		v := vh.Version
		if !counts(limit, vh.Notes) || v.Notes != nil {
			return Source{}, fmt.Errorf("source %s: version %s: bad head", s.Path, v.Hash)
		}
		v.Notes = makeFor[VersionNote](vh.Notes, limit)
		for len(v.Notes) < vh.Notes {
			var b versionBatch
			if err := decodeBatch(dec, &b, vh.Notes-len(v.Notes)); err != nil {
				return Source{}, fmt.Errorf("source %s: version %s: %w", s.Path, v.Hash, err)
			}
			if len(b.Shifts) != len(b.Deltas) || len(b.InlineAt) != len(b.Inline) {
				return Source{}, fmt.Errorf("source %s: version %s: %d shifts for %d notes, %d places for %d", s.Path, v.Hash, len(b.Shifts), len(b.Deltas), len(b.InlineAt), len(b.Inline))
			}
			refs := newRefCoder()
			err := interleave(len(b.Deltas), b.InlineAt, func(k int) error {
				i, ok := refs.get(b.Deltas[k], len(notes))
				if !ok {
					return fmt.Errorf("bad note reference %d", b.Deltas[k])
				}
				n := notes[i]
				v.Notes = append(v.Notes, VersionNote{Heading: n.heading.Value(), Text: n.text, Line: int(n.line) + b.Shifts[k]})
				return nil
			}, func(k int) error {
				// Equal to no current note of the file: it may be to
				// one of another version.
				n := b.Inline[k]
				n.Heading, n.Text = in.of(n.Heading), in.of(n.Text)
				v.Notes = append(v.Notes, n)
				return nil
			})
			if err != nil {
				return Source{}, fmt.Errorf("source %s: version %s: %w", s.Path, v.Hash, err)
			}
		}
		s.Earlier = append(s.Earlier, v)
	}
	sharePrefixes(s.Earlier)
	return s, nil
}

// decodeIDs decodes n note ids from idBatches of a stream of limit bytes.
func decodeIDs(dec *gob.Decoder, notes []*storedNote, n, limit int) ([]string, error) {
	ids := makeFor[string](n, limit)
	for len(ids) < n {
		var b idBatch
		if err := decodeBatch(dec, &b, n-len(ids)); err != nil {
			return nil, err
		}
		if len(b.Missing) != len(b.IDs) {
			return nil, fmt.Errorf("%d places for %d ids", len(b.Missing), len(b.IDs))
		}
		refs := newRefCoder()
		err := interleave(len(b.Deltas), b.Missing, func(k int) error {
			i, ok := refs.get(b.Deltas[k], len(notes))
			if !ok {
				return fmt.Errorf("bad note reference %d", b.Deltas[k])
			}
			ids = append(ids, notes[i].id)
			return nil
		}, func(k int) error {
			ids = append(ids, b.IDs[k])
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// batch is a message of the meta stream that holds len items.
type batch interface{ len() int }

func (b *noteBatch) len() int    { return len(b.Notes) }
func (b *idBatch) len() int      { return len(b.Deltas) + len(b.IDs) }
func (b *versionBatch) len() int { return len(b.Deltas) + len(b.Inline) }

// decodeBatch decodes the next message into b and checks it holds at
// least one item and at most left.
func decodeBatch(dec *gob.Decoder, b batch, left int) error {
	if err := dec.Decode(b); err != nil {
		return err
	}
	if n := b.len(); n == 0 || n > left {
		return fmt.Errorf("batch of %d where %d are left", n, left)
	}
	return nil
}

// interleave calls ref for each of refs items and other for each of the
// others, in the order of the batch, where at lists the places of the
// others.
func interleave(refs int, at []int, ref, other func(k int) error) error {
	k, j := 0, 0
	for place := range refs + len(at) {
		var err error
		switch {
		case j < len(at) && at[j] == place:
			err = other(j)
			j++
		case k < refs:
			err = ref(k)
			k++
		default:
			return fmt.Errorf("bad places %v", at)
		}
		if err != nil {
			return err
		}
	}
	if j != len(at) {
		return fmt.Errorf("bad places %v", at)
	}
	return nil
}

// counts reports whether each of ns could be a count of items in a stream
// of limit bytes.
func counts(limit int, ns ...int) bool {
	for _, n := range ns {
		if n < 0 || n > limit {
			return false
		}
	}
	return true
}

// makeFor returns a slice with room for n items, nil for none: gob decodes
// an empty slice as nil, and version 1 files load so. The room is at most
// limit bytes, the size of the stream n was read from: counts only bound
// how many items a stream can hold, and an item in memory (a Source is 176
// bytes) can be far larger than on the wire, so a crafted count would
// otherwise cost its file's size many times over before it is found out.
func makeFor[T any](n, limit int) []T {
	if n == 0 {
		return nil
	}
	size := max(int(reflect.TypeFor[T]().Size()), 1)
	return make([]T, 0, min(n, limit/size))
}
