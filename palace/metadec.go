package palace

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// Reading the meta stream of wing files of versions 2 and 3, as file.go
// describes it, checking every count and reference it holds.

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
	if m.VecIDs, _, err = decodeIDs(dec, m.Notes, head.Vectors, limit, false); err != nil {
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
	var held []*storedNote
	if s.NoteIDs, held, err = decodeIDs(dec, notes, head.NoteIDs, limit, head.Earlier > 0); err != nil {
		return Source{}, fmt.Errorf("source %s: note ids: %w", s.Path, err)
	}
	// The current notes as a version's, made once: the versions that
	// start with them share it.
	var current []VersionNote
	s.Earlier = makeFor[Version](head.Earlier, limit)
	for range head.Earlier {
		var vh versionHead
		if err := dec.Decode(&vh); err != nil {
			return Source{}, fmt.Errorf("source %s: version: %w", s.Path, err)
		}
		v := vh.Version
		if !counts(limit, vh.Notes) || v.Notes != nil || vh.Current < 0 || vh.Current > vh.Notes || vh.Current > len(held) {
			return Source{}, fmt.Errorf("source %s: version %s: bad head", s.Path, v.Hash)
		}
		for len(current) < vh.Current {
			n := held[len(current)]
			if n == nil {
				return Source{}, fmt.Errorf("source %s: version %s: current note %d is none of the wing's", s.Path, v.Hash, len(current))
			}
			current = append(current, VersionNote{Heading: n.heading.Value(), Text: n.text, Line: int(n.line)})
		}
		if vh.Current > 0 {
			v.Notes = current[:vh.Current:vh.Current]
		} else {
			v.Notes = makeFor[VersionNote](vh.Notes, limit)
		}
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

// decodeIDs decodes n note ids from idBatches of a stream of limit bytes,
// and with keep the note of each id too (nil for an id of no note).
func decodeIDs(dec *gob.Decoder, notes []*storedNote, n, limit int, keep bool) ([]string, []*storedNote, error) {
	ids := makeFor[string](n, limit)
	var held []*storedNote
	if keep {
		held = makeFor[*storedNote](n, limit)
	}
	for len(ids) < n {
		var b idBatch
		if err := decodeBatch(dec, &b, n-len(ids)); err != nil {
			return nil, nil, err
		}
		if len(b.Missing) != len(b.IDs) {
			return nil, nil, fmt.Errorf("%d places for %d ids", len(b.Missing), len(b.IDs))
		}
		refs := newRefCoder()
		err := interleave(len(b.Deltas), b.Missing, func(k int) error {
			i, ok := refs.get(b.Deltas[k], len(notes))
			if !ok {
				return fmt.Errorf("bad note reference %d", b.Deltas[k])
			}
			ids = append(ids, notes[i].id)
			if keep {
				held = append(held, notes[i])
			}
			return nil
		}, func(k int) error {
			ids = append(ids, b.IDs[k])
			if keep {
				held = append(held, nil)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return ids, held, nil
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
