package pack

import (
	"context"
	"testing"
	"time"

	"github.com/memminer/memminer/bench/hivegen"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

// BenchmarkRender renders a pack that uses two of ten wings of a
// 10,000-note lexical palace, and avoids a tag, at the default budget.
func BenchmarkRender(b *testing.B) {
	ctx := context.Background()
	hive := b.TempDir()
	if _, err := hivegen.Write(hive, hivegen.Options{Notes: 10000}); err != nil {
		b.Fatal(err)
	}
	p, err := palace.Open(ctx, b.TempDir(), palace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	if _, err := mine.Mine(ctx, p, hive, mine.Options{Hive: hive}); err != nil {
		b.Fatal(err)
	}
	pk := &Pack{Name: "b", File: "packs/b.md", Use: []Entry{{Kind: Wing, Value: "agent-001"}, {Kind: Wing, Value: "agent-007"}}, Avoid: []Entry{{Kind: Tag, Value: "deploy"}}}
	opts := Options{Hive: hive, Now: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), StaleAfter: -1}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := Render(ctx, p, pk, opts)
		if err != nil || len(r.Notes) == 0 {
			b.Fatalf("%d notes, %v", len(r.Notes), err)
		}
	}
}
