package palace

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// scored is a note id with a score, higher is better.
type scored struct {
	id    string
	score float64
}

// search scores the index's live notes by plain BM25 for query and returns
// the best k, ties by id. Search itself scores through fusion.go; this
// reads the index directly, to check its postings, counts and lengths.
func (x *lexIndex) search(query string, k int) []scored {
	if x.live == 0 || k <= 0 {
		return nil
	}
	n := float64(x.live)
	avg := float64(x.totalLen) / n
	if avg == 0 {
		avg = 1
	}
	acc := map[int32]float64{}
	seen := map[int32]bool{}
	for _, w := range lexTerms(query) {
		t, ok := x.termIDs[w]
		if !ok || seen[t] || x.df[t] == 0 {
			continue
		}
		seen[t] = true
		df := float64(x.df[t])
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for p := range x.postings(t) {
			if d := x.docs[p.doc]; !d.dead() {
				acc[p.doc] += bm25(idf, float64(p.tf), float64(d.length), avg)
			}
		}
	}
	ids := make(map[int32]string, len(x.byID))
	for id, d := range x.byID {
		ids[d] = id
	}
	out := make([]scored, 0, len(acc))
	for doc, s := range acc {
		out = append(out, scored{ids[doc], s})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id < out[j].id
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// lexWords is the vocabulary of the generated notes: compounds, words that
// stem alike, stopwords, and digits.
var lexWords = strings.Fields(`postgres db-2 db-1 replica runs running run on the of electron-vite
	bundle built backup backups nightly wal archive migration migrations port-5432 ERR_NO_SPACE
	agent's don't v1.2 cache cached terraform grafana sentry 東京 alert alerts is a to 42 2026-01-12`)

// lexText is a random note of up to 15 words, some repeated.
func lexText(r *rand.Rand) string {
	n := r.IntN(16)
	words := make([]string, n)
	for i := range words {
		if r.IntN(8) == 0 {
			words[i] = fmt.Sprintf("rare%d", r.IntN(400)) // terms that come and go
		} else {
			words[i] = lexWords[r.IntN(len(lexWords))]
		}
	}
	return strings.Join(words, " ")
}

// After any sequence of adds, replacements, removes (with the indexed text,
// with another one, or of unknown ids), compactions and packs, the index
// scores every query exactly as one built afresh from the notes left: the
// same float64s, bit for bit.
func TestLexIndexMatchesFreshBuild(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			x := newLexIndex()
			texts := map[string]string{}
			var ids []string // of texts, in no particular order
			// Phases of mostly adding and of mostly removing, so the index
			// compacts now and then; the last adds, and the notes that
			// were compacted and survive are counted.
			compactions, compacted := 0, map[string]bool{}
			for step := range 13 * 250 {
				remove, add := 5, 70 // percent
				if step/250%2 == 1 {
					remove, add = 40, 30
				}
				switch op := r.IntN(100); {
				case op < remove && len(ids) > 0:
					// One note or a batch; told one by one, at once, or
					// at once and found in the postings.
					k := 1
					if r.IntN(10) == 0 {
						k = 1 + r.IntN(min(20, len(ids)))
					}
					var batch, given []string
					for range k {
						i := r.IntN(len(ids))
						id := ids[i]
						text := texts[id]
						if r.IntN(5) == 0 {
							text = lexText(r) // not the indexed text: found by the postings
						}
						batch, given = append(batch, id), append(given, text)
						delete(texts, id)
						ids[i] = ids[len(ids)-1]
						ids = ids[:len(ids)-1]
					}
					if r.IntN(8) == 0 {
						batch, given = append(batch, batch[0]), append(given, given[0]) // twice
					}
					textOf := func(i int) string { return given[i] }
					before := len(x.docs)
					switch r.IntN(3) {
					case 0:
						for i, id := range batch {
							x.remove(id, given[i])
						}
					case 1:
						x.removeAll(batch, textOf)
					default:
						x.drop(batch, textOf, true)
					}
					if len(x.docs) < before {
						compactions++
						clear(compacted)
						for id := range x.byID {
							compacted[id] = true
						}
					}
				case op < remove+add:
					id := fmt.Sprint("n", step)
					texts[id] = lexText(r)
					ids = append(ids, id)
					x.addNote(storedNotes(&Note{ID: id, Text: texts[id]})[0])
				case op%3 == 0 && len(ids) > 0:
					id := ids[r.IntN(len(ids))] // replaced
					texts[id] = lexText(r)
					x.addNote(storedNotes(&Note{ID: id, Text: texts[id]})[0])
				case op%3 == 1:
					x.remove(fmt.Sprint("absent", step), "postgres")
				default:
					x.pack()
				}
			}
			survivors := 0
			for id := range compacted {
				if _, ok := texts[id]; ok {
					survivors++
				}
			}
			if compactions == 0 || survivors < 10 {
				t.Fatalf("%d compactions, %d notes survived the last", compactions, survivors)
			}
			fresh := newLexIndex()
			for _, id := range slices.Sorted(maps.Keys(texts)) {
				fresh.add(id, texts[id])
			}
			if x.live != fresh.live || x.totalLen != fresh.totalLen || len(x.byID) != len(texts) {
				t.Fatalf("live %d, total length %d, %d ids; fresh: %d, %d, %d", x.live, x.totalLen, len(x.byID), fresh.live, fresh.totalLen, len(texts))
			}
			// The index is the table of the notes too.
			held := 0
			for n := range x.allNotes() {
				if held++; texts[n.id] != n.text || x.note(n.id) != n {
					t.Fatalf("note %s holds %q, want %q", n.id, n.text, texts[n.id])
				}
			}
			if held != len(texts) {
				t.Fatalf("the index holds %d notes, want %d", held, len(texts))
			}
			for w, ft := range fresh.termIDs {
				if df := x.df[x.termIDs[w]]; df != fresh.df[ft] {
					t.Errorf("df of %q = %d, fresh %d", w, df, fresh.df[ft])
				}
			}
			for id, text := range texts {
				d := x.docs[x.byID[id]]
				if d.length != fresh.docs[fresh.byID[id]].length {
					t.Errorf("length of %s = %d, fresh %d", id, d.length, fresh.docs[fresh.byID[id]].length)
				}
				if _, ok := x.indexedTerms(text, d); !ok {
					t.Errorf("%s's text no longer matches its check", id)
				}
			}
			queries := append(slices.Clone(lexWords), "postgres db-2 replica", "rare7 rare8 rare9 backups", "the of a", "wal archive migration port-5432 東京")
			for i := range 50 {
				queries = append(queries, fmt.Sprint("rare", i*8))
			}
			for _, q := range queries {
				got, want := x.search(q, len(texts)), fresh.search(q, len(texts))
				if !slices.Equal(got, want) {
					t.Fatalf("search %q:\n got %v\nwant %v", q, got, want)
				}
			}
		})
	}
}

// Postings round-trip through their encoding, gaps and counts of any size.
func TestLexPostingsEncoding(t *testing.T) {
	x := newLexIndex()
	x.lists = []postingList{{last: -1}}
	want := []posting{{0, 1}, {1, 2}, {2, 1}, {130, 1}, {131, 300}, {70_000, 3}, {1 << 30, 1}}
	for _, p := range want {
		x.appendPosting(0, p)
	}
	if got := slices.Collect(x.postings(0)); !slices.Equal(got, want) {
		t.Fatalf("postings = %v, want %v", got, want)
	}
	if x.size != len(x.lists[0].data) || x.held != cap(x.lists[0].data) {
		t.Fatalf("size %d held %d for a list of %d bytes, capacity %d", x.size, x.held, len(x.lists[0].data), cap(x.lists[0].data))
	}
	x.held += x.size // as if an earlier block were left
	x.pack()
	if got := slices.Collect(x.postings(0)); !slices.Equal(got, want) || !x.lists[0].packed || x.held != x.size+x.size/listRoom {
		t.Fatalf("packed postings = %v, want %v; size %d held %d", got, want, x.size, x.held)
	}
	// The list grows into its room in the block, then out of it.
	room := x.size / listRoom
	block := x.held
	for i := range room + 1 {
		x.appendPosting(0, posting{1<<30 + 1 + int32(i), 1})
		want = append(want, posting{1<<30 + 1 + int32(i), 1})
		if i < room && (!x.lists[0].packed || x.held != block) {
			t.Fatalf("a posting that fits the list's room moved it: size %d held %d", x.size, x.held)
		}
	}
	if got := slices.Collect(x.postings(0)); !slices.Equal(got, want) || x.lists[0].packed || x.held != block+cap(x.lists[0].data) {
		t.Fatalf("a list that grew out of the block: %v, size %d held %d", got, x.size, x.held)
	}
}

// Re-mining one note at a time does not copy every posting each time: the
// block pack made is made again only once the lists hold twice its size.
func TestLexIndexPacksRarelyForFewNotes(t *testing.T) {
	ids := benchIDs(2000)
	x := benchIndex(ids)
	repacked := 0
	for i := range 400 {
		j := i * 7 % len(ids)
		x.remove(ids[j], benchNote(j))
		x.add(ids[j], benchNote(j))
		held := x.held
		x.pack()
		if x.held != held {
			repacked++
		}
	}
	if repacked > 2 {
		t.Errorf("400 notes re-mined one by one made the block again %d times", repacked)
	}
}

// benchNote is the text of a generated note like the bullets of a large
// memory.md: a few hundred subjects and objects, a dozen phrasings, a date.
func benchNote(i int) string {
	subjects := []string{"postgres", "db-1", "pgbouncer", "ci-runner", "electron-vite", "wal-archive", "search-index", "auth-service", "tls-certs", "cron-jobs"}
	objects := []string{"terraform", "grafana", "sentry", "kubernetes", "the-wiki", "prometheus", "vault", "docker-compose", "us-east-1", "port-6379"}
	verbs := []string{"runs on", "is cached by", "alerts through", "must not touch", "is configured in", "fails when", "replaced", "is rebuilt by"}
	reasons := []string{"because it kept timing out", "as agreed with the platform team", "since the last migration", "for compliance reasons", "until the next release", "to save cost"}
	return fmt.Sprintf("Section %d: %s-%d %s %s-%d %s (added 2026-%02d-%02d).",
		i/25, subjects[i%len(subjects)], i%37, verbs[i/7%len(verbs)], objects[i/3%len(objects)], i%53, reasons[i/11%len(reasons)], i%12+1, i%28+1)
}

// benchIDs are the ids of n generated notes.
func benchIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%032x", i)
	}
	return ids
}

// benchIndex indexes the generated notes of ids, packed as after opening
// a wing.
func benchIndex(ids []string) *lexIndex {
	x := newLexIndex()
	for i, id := range ids {
		x.add(id, benchNote(i))
	}
	x.pack()
	return x
}

// BenchmarkLexIndexMemory reports what a wing's lexical index holds live
// per note (bytes-per-note, byID's map included but not the ids, which
// the wing's notes hold) and per posting (postings-bytes-per-posting), for
// 585,000 generated notes.
func BenchmarkLexIndexMemory(b *testing.B) {
	const n = 585_000
	ids := benchIDs(n)
	var held uint64
	var x *lexIndex
	for b.Loop() {
		x = nil
		runtime.GC()
		base := testutil.HeapBytes()
		x = benchIndex(ids)
		runtime.GC()
		held = testutil.HeapBytes() - base
	}
	postings := 0
	for t := range x.lists {
		for range x.postings(int32(t)) {
			postings++
		}
	}
	b.ReportMetric(float64(held)/n, "bytes-per-note")
	b.ReportMetric(float64(x.size)/float64(postings), "postings-bytes-per-posting")
	b.ReportMetric(float64(postings)/n, "postings-per-note")
}

// BenchmarkLexIndexReplace replaces one note of 585,000 as a re-mine of a
// changed note does: remove it with its text, add the new text, pack.
func BenchmarkLexIndexReplace(b *testing.B) {
	const n = 585_000
	ids := benchIDs(n)
	x := benchIndex(ids)
	i := 0
	for b.Loop() {
		j := i % n
		x.remove(ids[j], benchNote(j))
		x.add(ids[j], benchNote(j))
		x.pack()
		i += 7919
	}
}

// BenchmarkLexIndexRemoveAll removes 10,000 notes of 585,000 at once, by
// their texts and by one pass over the postings, and reports the time per
// note removed: what scanBytesPerNote weighs.
func BenchmarkLexIndexRemoveAll(b *testing.B) {
	const n, k = 585_000, 10_000
	ids := benchIDs(n)
	x := benchIndex(ids)
	for _, scan := range []bool{false, true} {
		b.Run(map[bool]string{false: "texts", true: "postings"}[scan], func(b *testing.B) {
			start := 0
			for b.Loop() {
				batch := ids[start : start+k]
				x.drop(batch, func(i int) string { return benchNote(start + i) }, scan)
				b.StopTimer()
				for i, id := range batch {
					x.add(id, benchNote(start+i))
				}
				start = (start + k) % (n - k)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*k), "ns-per-note")
		})
	}
}
