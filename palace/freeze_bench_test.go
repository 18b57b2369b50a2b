package palace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWriteWing writes the file of a wing of 1,000 notes read from
// its file and one note appended, as a mine after one appended note does
// for the wing it changed.
func BenchmarkWriteWing(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	p, err := Open(ctx, filepath.Join(dir, "palace"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	notes := make([]Note, 1000)
	for i := range notes {
		notes[i] = note(fmt.Sprintf("n-%d", i), fmt.Sprintf("Infra > Part %d", i/20),
			fmt.Sprintf("postgres-%d runs on db-%d behind pgbouncer %d; the canary deploy goes to node-%d first", i%97, i%13, i, i%31), i+3)
	}
	src := Source{Path: "/hive/agents/w/memory.md", Agent: "w", Hash: "h"}
	if _, err := p.ApplySource(ctx, "w", src, notes[:len(notes)-1]); err != nil {
		b.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		b.Fatal(err)
	}
	p.Close()
	// Read again and one note appended, as such a mine holds it.
	if p, err = Open(ctx, filepath.Join(dir, "palace"), Options{}); err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	src.Hash = "h2"
	if _, err := p.ApplySource(ctx, "w", src, notes); err != nil {
		b.Fatal(err)
	}
	w := p.wings["w"]
	f, err := os.Create(filepath.Join(dir, "w.wing"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.ReportAllocs()
	for b.Loop() {
		s, err := w.freezeSnapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Seek(0, 0); err != nil {
			b.Fatal(err)
		}
		if err := writeWingV3(f, s); err != nil {
			b.Fatal(err)
		}
	}
}
