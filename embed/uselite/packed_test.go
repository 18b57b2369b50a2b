package uselite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/memminer/memminer/internal/atomicfile"
)

// The first load of a converted file checks it and writes the packed
// file; later loads map that and embed the same vectors, bit for bit,
// without checking the weights while the files keep the size and time
// recorded: a byte changed in place, time kept, still loads. Touching the
// converted file makes the next load check it again, which finds the
// damage; a packed file of another size or an older format is not
// trusted.
func TestPackedModelLoads(t *testing.T) {
	data, err := newSynthetic(t).bundle(t).encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), convertedName)
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	first, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path + packedSuffix, path + recordSuffix} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("first load wrote no %s: %v", filepath.Base(p), err)
		}
	}
	texts := []string{"Postgres runs on db-2.", "", "the release train leaves on Fridays, 14:00 UTC"}
	want, err := first.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// A flipped weight byte, the file's size and time kept: the packed
	// file is trusted, and its vectors are the first load's.
	damaged := append([]byte(nil), data...)
	damaged[len(damaged)/2] ^= 1
	if err := os.WriteFile(path, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	packed, err := Open(path)
	if err != nil {
		t.Fatalf("load of the packed file: %v", err)
	}
	got, err := packed.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("the packed model embeds other vectors than the converted one")
	}
	raw, err := os.ReadFile(path + packedSuffix)
	if err != nil {
		t.Fatal(err)
	}
	// Copied to 64-aligned memory, as a mapping is.
	aligned := make([]uint64, (len(raw)+7)/8)
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&aligned[0])), len(raw))
	copy(buf, raw)
	pb, err := parsePacked(buf)
	if err != nil {
		t.Fatal(err)
	}
	// Every matrix as its bfloat16 parts too, whatever this CPU runs.
	for name, mat := range first.net.matrices() {
		bm := newBF16Matrix(mat)
		for suffix, want := range map[string][]uint16{bf16Suffix: bm.data, bf16LoSuffix: bm.lo} {
			bt, ok := pb.get(name + suffix)
			data, _ := fromFloats[uint16](bt.data)
			if !ok || !slices.Equal(data, want) {
				t.Fatalf("the packed file's %s%s is not the matrix's bfloat16 panels", name, suffix)
			}
		}
		if got := bf16Of(pb, name, mat); !slices.Equal(got.data, bm.data) || !slices.Equal(got.lo, bm.lo) {
			t.Fatalf("%s: the bfloat16 parts read from the packed file are not the matrix's", name)
		}
	}
	if _, ok := packedTokenizer(pb); !ok {
		t.Fatal("the packed file holds no tokenizer")
	}
	if _, ok := packedTokenizer(&bundle{}); ok {
		t.Fatal("a bundle without a trie gives a tokenizer")
	}
	if !reflect.DeepEqual(packed.tok.keys, first.tok.keys) || !reflect.DeepEqual(packed.tok.id, first.tok.id) {
		t.Fatal("the packed model's tokenizer is not the converted one's")
	}
	for _, text := range append(texts, "naïve café — 東京 db-2 ERR_NO_SPACE", "aaaaaaaaaaaaaaaa b") {
		if g, w := packed.Tokenize(text), first.Tokenize(text); !reflect.DeepEqual(g, w) {
			t.Fatalf("packed tokenizer: %q → %v, want %v", text, g, w)
		}
	}
	// Its time changed: checked again, and the damage found.
	later := info.ModTime().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("load after the converted file changed: %v, want ErrCorrupt", err)
	}
	// Repaired: checked, packed again; a packed file cut short is not used.
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err != nil {
		t.Fatal(err)
	}
	pinfo, err := os.Stat(path + packedSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path+packedSuffix, pinfo.Size()/2); err != nil {
		t.Fatal(err)
	}
	again, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Embed(context.Background(), texts); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("load beside a cut packed file: %v, same vectors %v", err, reflect.DeepEqual(got, want))
	}
	// A packed file of the previous format (no low bfloat16 parts), its
	// size and time those recorded: packed anew, in this format.
	f, err := os.OpenFile(path+packedSuffix, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	pinfo, err = f.Stat()
	if err == nil {
		_, err = f.WriteAt([]byte("MMUSEP02"), 0)
	}
	if err := errors.Join(err, f.Close(), os.Chtimes(path+packedSuffix, pinfo.ModTime(), pinfo.ModTime())); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err != nil {
		t.Fatal(err)
	}
	if head, err := os.ReadFile(path + packedSuffix); err != nil || string(head[:len(packedMagic)]) != packedMagic {
		t.Fatalf("the old format's packed file was not packed anew (%v)", err)
	}
}
