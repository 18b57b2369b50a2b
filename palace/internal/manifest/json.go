package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/memminer/memminer/palace/internal/wingfile"
)

// Every command reads the manifest and every mine writes it, and
// encoding/json took half a millisecond a read at 100 wings. The manifest
// is written here as json.Marshal writes it, byte for byte, and read here
// when it is in exactly that form; anything else (an earlier build's
// manifest, one edited by hand) is read by encoding/json. Tests check both
// against encoding/json.

// errManifestForm means the manifest is not in the form appendManifest
// writes: encoding/json reads it instead.
var errManifestForm = errors.New("manifest not in its written form")

// marshalManifest is json.Marshal(m).
func marshalManifest(m Manifest) ([]byte, error) {
	b, err := appendManifest(make([]byte, 0, 512*len(m.Wings)+64), m)
	if errors.Is(err, errManifestForm) {
		return json.Marshal(m)
	}
	return b, err
}

func appendManifest(b []byte, m Manifest) ([]byte, error) {
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, int64(m.Version), 10)
	b = append(b, `,"wings":`...)
	if m.Wings == nil {
		return append(b, "null}"...), nil
	}
	b = append(b, '{')
	var err error
	for i, id := range slices.Sorted(maps.Keys(m.Wings)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, id)
		b = append(b, ':')
		if b, err = appendManifestEntry(b, m.Wings[id]); err != nil {
			return nil, err
		}
	}
	return append(b, "}}"...), nil
}

// entryDigest is the FNV-1a hash of e as appendManifestEntry writes it
// without its digest; zero when it cannot (encoding/json writes it).
func entryDigest(e Entry) uint64 {
	e.Digest, e.read = 0, nil
	b, err := appendManifestEntry(make([]byte, 0, 512), e)
	if err != nil {
		return 0
	}
	return digestOf(b)
}

// digestOf is the digest of the bytes of parts, one after another.
func digestOf(parts ...[]byte) uint64 {
	h := fnv.New64a()
	for _, b := range parts {
		h.Write(b)
	}
	return max(h.Sum64(), 1)
}

// A readEntry is a manifest entry's bytes as parseManifest read them, and
// their digest without the digest field (as entryDigest hashes them):
// an entry read in its written form needs neither encoding again to be
// checked, nor to be written unchanged. Every mine reads and writes
// every entry, and did both for each.
type readEntry struct {
	bytes  []byte
	digest uint64
}

// digestAsRead is entryDigest(e), from the bytes e was read from when it
// was read in its written form: bytes of another form (a hand edit) give
// another digest, so the entry is not trusted, as when a value changed.
func (e Entry) digestAsRead() uint64 {
	if e.read != nil {
		return e.read.digest
	}
	return entryDigest(e)
}

func appendManifestEntry(b []byte, e Entry) ([]byte, error) {
	if e.read != nil && e.Digest == e.read.digest {
		// As it was read, and as its writer wrote it.
		return append(b, e.read.bytes...), nil
	}
	var err error
	b = append(b, `{"model":`...)
	b = appendJSONString(b, e.Model)
	b = append(b, `,"roots":`...)
	b = appendJSONStrings(b, e.Roots)
	b = append(b, `,"notes":`...)
	b = strconv.AppendInt(b, int64(e.Notes), 10)
	b = append(b, `,"last_mined":`...)
	if b, err = appendJSONTime(b, e.LastMined); err != nil {
		return nil, err
	}
	b = append(b, `,"sources":`...)
	if e.Sources == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for k, s := range e.Sources {
			if k > 0 {
				b = append(b, ',')
			}
			if b, err = appendManifestSource(b, s); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if e.Seal != nil {
		b = appendSeal(append(b, `,"seal":`...), e.Seal)
	}
	if e.Listed != nil {
		b = appendSeal(append(b, `,"listed":`...), e.Listed)
	}
	if e.Digest != 0 {
		b = append(b, `,"digest":`...)
		b = strconv.AppendUint(b, e.Digest, 10)
	}
	return append(b, '}'), nil
}

func appendSeal(b []byte, s *wingfile.Seal) []byte {
	b = append(b, `{"dev":`...)
	b = strconv.AppendUint(b, s.Dev, 10)
	b = append(b, `,"ino":`...)
	b = strconv.AppendUint(b, s.Ino, 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, s.Size, 10)
	b = append(b, `,"mtime_ns":`...)
	b = strconv.AppendInt(b, s.Mtime, 10)
	b = append(b, `,"ctime_ns":`...)
	b = strconv.AppendInt(b, s.Ctime, 10)
	return append(b, '}')
}

func appendManifestSource(b []byte, s Source) ([]byte, error) {
	var err error
	b = append(b, `{"path":`...)
	b = appendJSONString(b, s.Path)
	b = append(b, `,"mtime":`...)
	if b, err = appendJSONTime(b, s.Mtime); err != nil {
		return nil, err
	}
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, s.Size, 10)
	b = append(b, `,"hash":`...)
	b = appendJSONString(b, s.Hash)
	b = append(b, `,"notes":`...)
	b = strconv.AppendInt(b, int64(s.Notes), 10)
	b = append(b, `,"mined":`...)
	if b, err = appendJSONTime(b, s.Mined); err != nil {
		return nil, err
	}
	b = append(b, `,"governed":`...)
	b = strconv.AppendInt(b, int64(s.Governed), 10)
	b = append(b, `,"note_format":`...)
	b = strconv.AppendInt(b, int64(s.NoteFormat), 10)
	return append(b, '}'), nil
}

// plainJSON reports whether encoding/json writes s as it is, in quotes:
// printable ASCII that it does not escape.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

func appendJSONString(b []byte, s string) []byte {
	if plainJSON(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

func appendJSONStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONTime appends t as Time.MarshalJSON writes it, for the times
// it writes as RFC 3339 with nanoseconds; others (a year past 9999, an
// offset in seconds or of a day or more, which it refuses) leave the
// manifest to encoding/json.
func appendJSONTime(b []byte, t time.Time) ([]byte, error) {
	if y := t.Year(); y < 0 || y > 9999 {
		return nil, errManifestForm
	}
	if _, off := t.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		return nil, errManifestForm
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), nil
}

// unmarshalManifest is json.Unmarshal(data, &m) for m with an empty
// Wings map, as readManifest calls it.
func unmarshalManifest(data []byte) (Manifest, error) {
	if m, ok := parseManifest(data); ok {
		return m, nil
	}
	m := Manifest{Wings: map[string]Entry{}}
	err := json.Unmarshal(data, &m)
	return m, err
}

// manifestParser reads a manifest in the form appendManifest writes; any
// other byte stops it.
type manifestParser struct {
	b  []byte
	ok bool
}

func (r *manifestParser) lit(s string) {
	if r.ok && bytes.HasPrefix(r.b, []byte(s)) {
		r.b = r.b[len(s):]
		return
	}
	r.ok = false
}

// peek reports whether the input goes on with s, taking it if it does.
func (r *manifestParser) peek(s string) bool {
	if r.ok && bytes.HasPrefix(r.b, []byte(s)) {
		r.b = r.b[len(s):]
		return true
	}
	return false
}

func (r *manifestParser) str() string {
	if !r.ok || len(r.b) == 0 || r.b[0] != '"' {
		r.ok = false
		return ""
	}
	end := bytes.IndexByte(r.b[1:], '"')
	if end < 0 {
		r.ok = false
		return ""
	}
	s := r.b[1 : 1+end]
	r.b = r.b[end+2:]
	// Read as it stands unless it has an escape (or a byte JSON does not
	// allow in a string): encoding/json reads the whole manifest then.
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) || slices.ContainsFunc(s, func(c byte) bool { return c < 0x20 }) {
		r.ok = false
		return ""
	}
	return string(s)
}

// number reads an integer as JSON writes one: an optional minus, then 0
// or digits that do not start with 0.
func (r *manifestParser) number() []byte {
	n := 0
	if n < len(r.b) && r.b[n] == '-' {
		n++
	}
	digits := n
	for n < len(r.b) && r.b[n] >= '0' && r.b[n] <= '9' {
		n++
	}
	if !r.ok || n == digits || r.b[digits] == '0' && n > digits+1 {
		r.ok = false
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *manifestParser) int() int64 {
	v, err := strconv.ParseInt(string(r.number()), 10, 64)
	r.ok = r.ok && err == nil
	return v
}

func (r *manifestParser) uint() uint64 {
	v, err := strconv.ParseUint(string(r.number()), 10, 64)
	r.ok = r.ok && err == nil
	return v
}

func (r *manifestParser) time() time.Time {
	var t time.Time
	if s := r.str(); r.ok {
		r.ok = t.UnmarshalText([]byte(s)) == nil
	}
	return t
}

func (r *manifestParser) strings() []string {
	if r.peek("null") {
		return nil
	}
	r.lit("[")
	out := []string{}
	for r.ok && !r.peek("]") {
		if len(out) > 0 {
			r.lit(",")
		}
		out = append(out, r.str())
	}
	return out
}

func (r *manifestParser) seal() *wingfile.Seal {
	s := &wingfile.Seal{}
	r.lit(`{"dev":`)
	s.Dev = r.uint()
	r.lit(`,"ino":`)
	s.Ino = r.uint()
	r.lit(`,"size":`)
	s.Size = r.int()
	r.lit(`,"mtime_ns":`)
	s.Mtime = r.int()
	r.lit(`,"ctime_ns":`)
	s.Ctime = r.int()
	r.lit("}")
	return s
}

// parseManifest reads data when it is in the form appendManifest writes.
func parseManifest(data []byte) (Manifest, bool) {
	all := bytes.TrimSuffix(data, []byte("\n"))
	r := &manifestParser{b: all, ok: true}
	at := func() int { return len(all) - len(r.b) }
	m := Manifest{Wings: map[string]Entry{}}
	r.lit(`{"version":`)
	m.Version = int(r.int())
	r.lit(`,"wings":{`)
	for r.ok && !r.peek("}") {
		if len(m.Wings) > 0 {
			r.lit(",")
		}
		id := r.str()
		var e Entry
		r.lit(":")
		start := at()
		r.lit(`{"model":`)
		e.Model = r.str()
		r.lit(`,"roots":`)
		e.Roots = r.strings()
		r.lit(`,"notes":`)
		e.Notes = int(r.int())
		r.lit(`,"last_mined":`)
		e.LastMined = r.time()
		r.lit(`,"sources":`)
		if !r.peek("null") {
			r.lit("[")
			e.Sources = []Source{}
			for r.ok && !r.peek("]") {
				if len(e.Sources) > 0 {
					r.lit(",")
				}
				var s Source
				r.lit(`{"path":`)
				s.Path = r.str()
				r.lit(`,"mtime":`)
				s.Mtime = r.time()
				r.lit(`,"size":`)
				s.Size = r.int()
				r.lit(`,"hash":`)
				s.Hash = r.str()
				r.lit(`,"notes":`)
				s.Notes = int(r.int())
				r.lit(`,"mined":`)
				s.Mined = r.time()
				r.lit(`,"governed":`)
				s.Governed = int(r.int())
				r.lit(`,"note_format":`)
				s.NoteFormat = int(r.int())
				r.lit("}")
				e.Sources = append(e.Sources, s)
			}
		}
		if r.peek(`,"seal":`) {
			e.Seal = r.seal()
		}
		if r.peek(`,"listed":`) {
			e.Listed = r.seal()
		}
		body := at()
		if r.peek(`,"digest":`) {
			e.Digest = r.uint()
		}
		r.lit("}")
		if r.ok {
			e.read = &readEntry{bytes: all[start:at():at()], digest: digestOf(all[start:body], []byte("}"))}
		}
		if _, dup := m.Wings[id]; dup {
			r.ok = false
		}
		m.Wings[id] = e
	}
	r.lit("}")
	return m, r.ok && len(r.b) == 0
}
