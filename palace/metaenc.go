package palace

import (
	"bufio"
	"encoding/gob"
	"hash/maphash"
	"iter"
)

// Writing the meta stream of wing files of versions 2 and 3, as file.go
// describes it.

// encodeMeta writes m as the meta stream of a version 2 wing file, or
// without the notes (withNotes false) as that of versions 3 and 4, whose
// notes are in their index section.
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
	if withNotes {
		if err := encodeNotes(enc, m.Notes); err != nil {
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
		var same *sameNotes  // made for the first version that is not all current notes
		var out versionBatch // reused, as in encodeIDs
		for _, v := range s.Earlier {
			k := currentPrefix(m.Notes, index, s.NoteIDs, v.Notes)
			head := versionHead{Version: v, Notes: len(v.Notes), Current: k}
			head.Version.Notes = nil
			if err := enc.Encode(&head); err != nil {
				return err
			}
			if k < len(v.Notes) && same == nil {
				sn := newSameNotes(m.Notes, index, s.NoteIDs)
				same = &sn
			}
			for b := range batches(v.Notes[k:], func(n VersionNote) int { return len(n.Heading) + len(n.Text) }) {
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

// encodeNotes writes the notes of a version 2 file as noteBatches.
func encodeNotes(enc *gob.Encoder, notes []*storedNote) error {
	// The batch's notes are made of the stored ones a batch at a time, and
	// strings are left out of them.
	copies := make([]Note, batchLen)
	out := noteBatch{Notes: make([]*Note, batchLen), Same: make([]byte, batchLen)}
	var prev Note
	for b := range batches(notes, func(n *storedNote) int { return len(n.heading.Value()) + len(n.text) }) {
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
	return nil
}

// currentPrefix is how many of an earlier version's first notes are the
// file's first current notes (ids), the same heading, text and line.
func currentPrefix(notes []*storedNote, index map[string]int, ids []string, version []VersionNote) int {
	k := 0
	for ; k < len(version) && k < len(ids); k++ {
		i, ok := index[ids[k]]
		if !ok {
			break
		}
		n, v := notes[i], version[k]
		if int(n.line) != v.Line || n.text != v.Text || n.heading.Value() != v.Heading {
			break
		}
	}
	return k
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
