package mine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"iter"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/markdown"
	"github.com/memminer/memminer/memory/secrets"
	"github.com/memminer/memminer/palace"
)

// NoteID is a note's stable id: the same wing, file, heading path and text
// give the same id, so re-mining finds what it already has. rel is the
// file's path relative to its agent directory, '/'-separated: the id does
// not depend on where the hive lives, so every machine sharing a hive, and
// a hive that moved, derive the same ids. The occurrence number tells
// apart identical notes in one file.
func NoteID(wing, rel, heading, text string, occurrence int) string {
	sum := noteSum(wing, rel, heading, text, occurrence)
	return hex.EncodeToString(sum[:])
}

// noteSum is the hash a NoteID spells out: SHA-256 of the fields joined
// by NUL bytes, the occurrence in decimal. It is built in a buffer on the
// stack, not formatted into a hash.Hash: a mine hashes every note of a
// changed file, and the formatting cost more than the hash.
func noteSum(wing, rel, heading, text string, occurrence int) [16]byte {
	var buf [512]byte
	b := append(buf[:0], wing...)
	b = append(append(b, 0), rel...)
	b = append(append(b, 0), heading...)
	b = append(append(b, 0), text...)
	b = strconv.AppendInt(append(b, 0), int64(occurrence), 10)
	sum := sha256.Sum256(b)
	return [16]byte(sum[:16])
}

// NoteFormat is the version of how notes are derived from markdown, kept
// with each source (palace.Source.NoteFormat): a file mined with an older
// one is mined again by the next mine, even unchanged, keeping the vector
// of every note whose text did not change. 1: ids name the file by its
// path relative to the agent directory, not by its absolute path. 2: a
// secret in a note's text or heading is stored hidden (secrets.Hide).
const NoteFormat = 2

// relPath names path by its place below the agent directory base,
// '/'-separated, as note ids do.
func relPath(base, path string) string {
	rel, err := filepath.Rel(base, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		// Not below it (a link to a file elsewhere in the agent
		// directory's tree is resolved below it; nothing else is mined).
		return filepath.Base(path)
	}
	return filepath.ToSlash(rel)
}

// ConflictReason is the governance reason of a note mined from between
// Git conflict markers: it is marked stale, with this warning, until the
// conflict is resolved.
const ConflictReason = "in a Git conflict: one side's version, between conflict markers; resolve the merge"

// fileOf says what a mined file's notes are: of which wing, agent and
// file (path, and rel in ids), under which frontmatter; heldGoverned
// when the wing's notes of the file were classified under the same.
type fileOf struct {
	wing, rel, agent, path string
	govern                 govern.File
	heldGoverned           bool
	// mask hides the secrets of the file's text in the notes made
	// (secrets.Scan).
	mask secrets.Masker
}

// palaceNotes makes the palace notes of one file from its parsed notes, a
// section at a time: the parsed notes of the whole file are never held
// next to the palace's. The set holds them as the palace does, and a note
// the wing holds unchanged as the wing's own (palace.NoteSet), so
// re-mining a large file does not hold its notes twice.
func palaceNotes(p *palace.Palace, sections iter.Seq[[]markdown.Note], f fileOf) *palace.NoteSet {
	return addNotes(p.NewNoteSet(f.wing), sections, f)
}

// grownNotes is palaceNotes for a file that only grew since it was
// mined, whose sections from line on are sections: the notes before line
// are the wing's, as mined then (markdown.Resume says why they are the
// same). It returns nil when the wing's notes there are not what mining
// them now would make (another agent, governance held from a conflict,
// or governance that is not held), and the file must be mined whole.
func grownNotes(p *palace.Palace, sections iter.Seq[[]markdown.Note], line int, f fileOf) *palace.NoteSet {
	if !f.heldGoverned {
		return nil
	}
	notes := p.NewNoteSet(f.wing)
	keep := func(agent string, g govern.Note) bool { return agent == f.agent && g.Reason != ConflictReason }
	if !notes.AddHeld(f.path, line, keep) {
		return nil
	}
	return addNotes(notes, sections, f)
}

// addNotes adds the notes of sections to notes, which may hold notes of
// the file before them (grownNotes).
func addNotes(notes *palace.NoteSet, sections iter.Seq[[]markdown.Note], f fileOf) *palace.NoteSet {
	resumed := notes.Len() > 0
	occ := newOccurrences()
	hideHeading := lastOf(f.mask.Hide)
	for section := range sections {
		for _, n := range section {
			first := noteSum(f.wing, f.rel, n.Heading, n.Text, 0)
			id := hex.EncodeToString(first[:])
			k := 0
			// The notes held before are numbered already: the ones like
			// this one have its ids of occurrences 0, 1, … in turn.
			for resumed && notes.Holds(id) {
				k++
				id = NoteID(f.wing, f.rel, n.Heading, n.Text, k)
			}
			if c := occ.count(notes, first, n.Heading, n.Text); c > 0 {
				k += c
				id = NoteID(f.wing, f.rel, n.Heading, n.Text, k)
			}
			pn := palace.Note{ID: id, Wing: f.wing, Agent: f.agent, Source: f.path, Line: n.Line, Heading: hideHeading(n.Heading), Text: f.mask.Hide(n.Text)}
			held := false
			if f.heldGoverned && !n.Conflict {
				pn.Governance, held = notes.HeldGovernance(&pn)
				held = held && pn.Governance.Reason != ConflictReason
			}
			if !held {
				pn.Governance = govern.Classify(f.govern, n.Heading, n.Text)
			}
			if n.Conflict && pn.Governance.Status != govern.Superseded {
				pn.Governance.Status, pn.Governance.Reason = govern.Stale, ConflictReason
			}
			notes.Add(&pn)
		}
	}
	return notes
}

// lastOf is f remembering its last answer: a heading over a run of notes
// is hidden once.
func lastOf(f func(string) string) func(string) string {
	var in, out string
	done := false
	return func(s string) string {
		if !done || s != in {
			in, out, done = s, f(s), true
		}
		return out
	}
}

// occurrences numbers the notes of one file that have the same heading
// and text, as NoteID's occurrence. Each heading and text is keyed by
// four bytes of its first id's hash, at the index of the first note with
// it: 17 bytes a note, where a map of whole hashes took 48.
type occurrences struct {
	first map[uint32]int32 // hash prefix → the first note with it
	again map[int32]int    // first note → how many like it followed
	// other counts the notes whose hash prefix is a different note's.
	other map[[16]byte]int
}

func newOccurrences() *occurrences {
	return &occurrences{first: map[uint32]int32{}, again: map[int32]int{}, other: map[[16]byte]int{}}
}

// count returns how many of notes have heading and text (whose first
// id's hash is sum), and counts the note with them that notes gets next.
func (o *occurrences) count(notes *palace.NoteSet, sum [16]byte, heading, text string) int {
	key := binary.LittleEndian.Uint32(sum[:])
	i, ok := o.first[key]
	switch {
	case !ok && notes.Len() <= math.MaxInt32:
		o.first[key] = int32(notes.Len())
		return 0
	case ok && notes.Same(int(i), heading, text):
		o.again[i]++
		return o.again[i]
	}
	k := o.other[sum]
	o.other[sum] = k + 1
	return k
}
