package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/memminer/memminer/palace/internal/wingfile"
)

// manifestStrings are the kinds of strings a manifest holds, and some it
// never should: all must encode as encoding/json does.
var manifestStrings = []string{
	"", "agent-000", "/home/u/hive/agents/agent-000/memory.md", "lexical", "use-lite", "café/日本語", "a<b>&c", "quote\"d",
	"back\\slash", "tab\there", "line\nbreak", "\x00\x01\x1f", "\u2028\u2029", "bad \xff utf-8", "emoji 🚀", "be77fe0cd837013bbf6097fae14b8021",
}

func randomManifest(r *rand.Rand, plain bool) Manifest {
	str := func() string {
		if plain {
			return manifestStrings[r.IntN(3)+1]
		}
		return manifestStrings[r.IntN(len(manifestStrings))]
	}
	when := func() time.Time {
		switch r.IntN(6) {
		case 0:
			return time.Time{}
		case 1:
			if !plain {
				// Offsets Time.MarshalJSON writes, and ones it refuses (24 h).
				off := []int{90 * 60, -(23*3600 + 59*60), 24 * 3600, -(24*3600 + 59*60), 30}[r.IntN(5)]
				return time.Date(2026, 12, 6, 20, 30, 1, 0, time.FixedZone("x", off))
			}
		case 2:
			if !plain && r.IntN(4) == 0 {
				return time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) // Time.MarshalJSON refuses it
			}
		}
		return time.Unix(1_700_000_000+r.Int64N(1e8), r.Int64N(1e9)).UTC()
	}
	strs := func() []string {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		out := make([]string, 1+r.IntN(3))
		for i := range out {
			out[i] = str()
		}
		return out
	}
	m := Manifest{Version: r.IntN(3), Wings: map[string]Entry{}}
	if !plain && r.IntN(10) == 0 {
		m.Wings = nil
	}
	for range r.IntN(5) {
		e := Entry{Model: str(), Roots: strs(), Notes: r.IntN(2000) - 10, LastMined: when()}
		if r.IntN(4) > 0 {
			e.Sources = []Source{}
			for range r.IntN(3) {
				e.Sources = append(e.Sources, Source{Path: str(), Mtime: when(), Size: r.Int64N(1 << 40), Hash: str(), Notes: r.IntN(1000),
					Mined: when(), Governed: r.IntN(5), NoteFormat: r.IntN(3)})
			}
		}
		if r.IntN(3) > 0 {
			e.Seal = &wingfile.Seal{Dev: r.Uint64(), Ino: r.Uint64(), Size: r.Int64(), Mtime: r.Int64() - r.Int64(), Ctime: r.Int64()}
		}
		if r.IntN(3) == 0 {
			e.Listed = &wingfile.Seal{Dev: r.Uint64(), Ino: r.Uint64(), Size: r.Int64(), Mtime: r.Int64(), Ctime: r.Int64() - r.Int64()}
		}
		if r.IntN(2) > 0 {
			e.Digest = entryDigest(e)
		}
		if m.Wings != nil {
			m.Wings[str()+string(rune('a'+r.IntN(26)))] = e
		}
	}
	return m
}

// checkManifestDecode fails when unmarshalManifest reads data otherwise
// than encoding/json does, as readManifest uses it.
func checkManifestDecode(t *testing.T, data []byte) (fast bool) {
	t.Helper()
	want := Manifest{Wings: map[string]Entry{}}
	wantErr := json.Unmarshal(data, &want)
	got, ok := parseManifest(data)
	if !ok {
		return false
	}
	for id, e := range got.Wings {
		// Each entry read with its bytes, which say what it does, and
		// their digest without the digest field.
		read := e.read
		e.read = nil
		got.Wings[id] = e
		var fromBytes Entry
		if read == nil || json.Unmarshal(read.bytes, &fromBytes) != nil || !reflect.DeepEqual(fromBytes, e) {
			t.Fatalf("parseManifest(%q): entry %q read as %+v from %+v", data, id, e, read)
		}
		body := read.bytes
		if i := bytes.LastIndex(body, []byte(`,"digest":`)); i >= 0 && e.Digest != 0 {
			body = append(body[:i:i], '}')
		}
		if d := digestOf(body); read.digest != d {
			t.Fatalf("parseManifest(%q): entry %q digest %d as read, %d of its bytes", data, id, read.digest, d)
		}
	}
	if wantErr != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("parseManifest(%q)\n= %+v\nencoding/json: %+v, %v", data, got, want, wantErr)
	}
	return true
}

func TestManifestJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 6))
	fast := 0
	for i := range 4000 {
		m := randomManifest(r, i%2 == 0)
		want, wantErr := json.Marshal(m)
		got, err := marshalManifest(m)
		if (err != nil) != (wantErr != nil) || string(got) != string(want) {
			t.Fatalf("marshalManifest(%+v)\n= %s, %v\nencoding/json: %s, %v", m, got, err, want, wantErr)
		}
		if wantErr != nil {
			continue
		}
		if checkManifestDecode(t, want) {
			fast++
		}
		checkManifestDecode(t, append(want, '\n'))
	}
	// Vacuous unless the plain half was read by the parser.
	if fast < 1500 {
		t.Fatalf("parseManifest read only %d of 4000 manifests", fast)
	}
}

func FuzzParseManifest(f *testing.F) {
	r := rand.New(rand.NewPCG(27, 7))
	for i := range 32 {
		if b, err := json.Marshal(randomManifest(r, i%2 == 0)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"version":01,"wings":{}}`))
	f.Add([]byte(`{"version":1,"wings":{"a":{"model":"m","roots":null,"notes":1,"last_mined":"2026-01-01T00:00:00Z","sources":null},"a":{"model":"n","roots":[],"notes":2,"last_mined":"0001-01-01T00:00:00Z","sources":[]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkManifestDecode(t, data)
	})
}

func BenchmarkManifestJSON(b *testing.B) {
	r := rand.New(rand.NewPCG(27, 8))
	m := Manifest{Version: 1, Wings: map[string]Entry{}}
	for len(m.Wings) < 100 {
		e := randomManifest(r, true)
		for id, w := range e.Wings {
			m.Wings[id+string(rune('0'+len(m.Wings)%10))+string(rune('a'+len(m.Wings)/10))] = w
		}
	}
	data, _ := json.Marshal(m)
	b.Run("encoding/json decode", func(b *testing.B) {
		for b.Loop() {
			var got Manifest
			_ = json.Unmarshal(data, &got)
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			_, _ = unmarshalManifest(data)
		}
	})
	b.Run("encoding/json encode", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(m)
		}
	})
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			_, _ = marshalManifest(m)
		}
	})
	// What a mine does with the manifest: read it, check each entry's
	// digest, write it with one entry changed; the entries as read, or
	// encoded again.
	for _, again := range []bool{false, true} {
		b.Run(fmt.Sprintf("mine/encoded again=%v", again), func(b *testing.B) {
			for b.Loop() {
				got, _ := unmarshalManifest(data)
				changed := ""
				for id, e := range got.Wings {
					if again {
						e.read = nil
					}
					if e.digestAsRead() == 0 {
						b.Fatal("no digest")
					}
					got.Wings[id], changed = e, id
				}
				e := got.Wings[changed]
				e.Notes++
				e.Digest, e.read = entryDigest(e), nil
				got.Wings[changed] = e
				_, _ = marshalManifest(got)
			}
		})
	}
}
