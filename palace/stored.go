package palace

import (
	"cmp"
	"encoding/binary"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unique"
	"weak"

	"github.com/memminer/memminer/memory/govern"
)

// storedNote is a note as a wing holds it: a Note is 216 bytes, and a
// wing of a large file holds hundreds of thousands, most of them with
// the heading path, file and governance of their neighbours. A stored
// note keeps what is its own (id, text, line) and refers to the rest:
// the heading path and the note's place (wing, agent, file) as unique
// handles, and its governance as a shared value (internGovernance), in
// 64 bytes. A Note is made of it only where one leaves the palace
// (note). Stored notes are never changed once a wing holds them: a
// changed note replaces its stored one, so a snapshot may encode them
// outside the lock.
type storedNote struct {
	id, text string
	heading  unique.Handle[string]
	place    unique.Handle[notePlace]
	// gov is shared with every note of equal governance: never changed.
	gov  *govern.Note
	line int32
}

// notePlace is where a note comes from.
type notePlace struct{ wing, agent, source string }

// note returns the note as it leaves the palace: its Tags are its own, so
// a caller changing them changes no other note.
func (s *storedNote) note() Note {
	n := s.view()
	n.Governance.Tags = slices.Clone(n.Governance.Tags)
	return n
}

// view returns the note with its governance's Tags shared, for code of
// the palace that only reads it.
func (s *storedNote) view() Note {
	p := s.place.Value()
	return Note{ID: s.id, Wing: p.wing, Agent: p.agent, Source: p.source, Line: int(s.line),
		Heading: s.heading.Value(), Text: s.text, Governance: *s.gov}
}

// path is the note's source path.
func (s *storedNote) path() string { return s.place.Value().source }

// embedText is Note.EmbedText of the note.
func (s *storedNote) embedText() string {
	if h := s.heading.Value(); h != "" {
		return h + ": " + s.text
	}
	return s.text
}

// equals reports whether the stored note is n in every field.
func (s *storedNote) equals(n *Note) bool {
	return s.id == n.ID && s.text == n.Text && int(s.line) == n.Line && s.heading.Value() == n.Heading &&
		s.place.Value() == notePlace{n.Wing, n.Agent, n.Source} && sameGovernance(s.gov, &n.Governance)
}

// same reports whether the stored notes are equal in every field.
// Governance values are shared (internGovernance): equal ones are one.
func (s *storedNote) same(o *storedNote) bool {
	return s == o || s.id == o.id && s.text == o.text && s.line == o.line && s.heading == o.heading &&
		s.place == o.place && s.gov == o.gov
}

// compareStored orders notes by source path, then line, then id.
func compareStored(a, b *storedNote) int {
	if a.place != b.place {
		if c := strings.Compare(a.path(), b.path()); c != 0 {
			return c
		}
	}
	return cmp.Or(cmp.Compare(a.line, b.line), strings.Compare(a.id, b.id))
}

// storer makes stored notes. Notes come in file order, where neighbours
// mostly share their heading path, place and governance: it remembers the
// last of each, to look them up only when they change.
type storer struct {
	heading    unique.Handle[string]
	headingOf  string
	place      unique.Handle[notePlace]
	placeOf    notePlace
	gov        *govern.Note
	haveRecent bool
}

// store returns n as a stored note. A line beyond int32 (a file of more
// than two billion lines) is kept as the largest it can hold.
func (st *storer) store(n *Note) *storedNote {
	if !st.haveRecent || n.Heading != st.headingOf {
		st.heading, st.headingOf = unique.Make(n.Heading), n.Heading
	}
	if at := (notePlace{n.Wing, n.Agent, n.Source}); !st.haveRecent || at != st.placeOf {
		st.place, st.placeOf = unique.Make(at), at
	}
	if !st.haveRecent || !sameGovernance(st.gov, &n.Governance) {
		st.gov = internGovernance(&n.Governance)
	}
	st.haveRecent = true
	return &storedNote{id: n.ID, text: n.Text, heading: st.heading, place: st.place, gov: st.gov,
		line: int32(min(max(n.Line, math.MinInt32), math.MaxInt32))}
}

// sameGovernance reports whether a and b are equal in every field, an
// empty Tags equal to a nil one (as govern.Classify and gob make both).
func sameGovernance(a, b *govern.Note) bool {
	return a.Status == b.Status && a.Reason == b.Reason && a.Date == b.Date && a.Review == b.Review &&
		a.StaleAfter == b.StaleAfter && slices.Equal(a.Tags, b.Tags)
}

// governanceKey is a govern.Note as a map key.
type governanceKey struct {
	status       govern.Status
	reason       string
	date, review time.Time
	staleAfter   time.Duration
	// tags are the tags, each after its length as a uvarint.
	tags string
}

func keyOf(g *govern.Note) governanceKey {
	var tags []byte
	for _, t := range g.Tags {
		tags = binary.AppendUvarint(tags, uint64(len(t)))
		tags = append(tags, t...)
	}
	return governanceKey{status: g.Status, reason: g.Reason, date: g.Date, review: g.Review,
		staleAfter: g.StaleAfter, tags: string(tags)}
}

// governances holds every governance value stored notes share, each as
// long as a note refers to it: a value no note uses any more is
// collected, and its entry removed by the next sweep.
var governances = struct {
	sync.Mutex
	m map[governanceKey]weak.Pointer[govern.Note]
	// swept is how many entries the last sweep left.
	swept int
}{m: map[governanceKey]weak.Pointer[govern.Note]{}}

// minSweep is the fewest entries that make internGovernance sweep.
const minSweep = 256

// internGovernance returns the shared copy of g, which nobody may change;
// its Tags are nil when g has none.
func internGovernance(g *govern.Note) *govern.Note {
	k := keyOf(g)
	governances.Lock()
	defer governances.Unlock()
	if shared := governances.m[k].Value(); shared != nil {
		return shared
	}
	// Copies of the strings, which may be parts of a larger text.
	shared := new(govern.Note)
	*shared = *g
	shared.Reason, shared.Tags = strings.Clone(g.Reason), nil
	if len(g.Tags) > 0 {
		shared.Tags = make([]string, len(g.Tags))
		for i, t := range g.Tags {
			shared.Tags[i] = strings.Clone(t)
		}
	}
	// Entries of collected values are removed once the map has doubled
	// since the last sweep: amortised, where a cleanup for each value
	// (runtime.AddCleanup) was a third of interning the governances of a
	// wing as it is read.
	if n := len(governances.m); n >= max(2*governances.swept, minSweep) {
		maps.DeleteFunc(governances.m, func(_ governanceKey, v weak.Pointer[govern.Note]) bool { return v.Value() == nil })
		governances.swept = len(governances.m)
	}
	governances.m[keyOf(shared)] = weak.Make(shared)
	return shared
}
