package palace

import (
	"bufio"
	"encoding/gob"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/memminer/memminer/palace/internal/wingfile"
)

// Wing file version 2, which earlier builds wrote and which is still read
// (versions 3 to 5, of which 5 is written, are in wingfile.go; the
// framing of all of them is package wingfile's). A version 2 file is a
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
// both are written in the current version (wingfile.go) at their wing's
// next write. Version 3's meta part is this stream without the notes
// (encodeMeta), and version 4's too, with versionHead.Current.
const (
	batchLen   = 2048
	batchBytes = 1 << 20
)

// ErrCorrupt marks a palace file that failed its integrity check (a
// wing file of a version this build does not read is one too:
// wingfile.UnknownVersionError).
var ErrCorrupt = wingfile.ErrCorrupt

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
// it has. The first Current of them are the file's first current notes,
// the same heading, text and line (a file that only grew: every version
// is such a prefix); versionBatches of the rest follow. Current is zero
// in files before version 4.
type versionHead struct {
	Version Version
	Notes   int
	Current int
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
	var b [wingfile.StreamHeaderLen]byte
	n, _ := io.ReadFull(f, b[:]) // a short header is damaged: ParseStreamHeader says so
	header, err := wingfile.ParseStreamHeader(b[:n], info.Size())
	if err != nil {
		return nil, nil, err
	}
	if err := header.Check(f); err != nil {
		return nil, nil, err
	}
	meta := bufio.NewReaderSize(header.Meta(f), 1<<16)
	var m *wingMeta
	if header.Version == 1 {
		m, err = decodeMetaV1(meta)
	} else {
		m, err = decodeMeta(meta, int(min(header.MetaLen, math.MaxInt32)))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	vecs, err := header.Vectors(f, len(m.VecIDs), m.Dim)
	if err != nil {
		return nil, nil, err
	}
	return m, vecs, nil
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
