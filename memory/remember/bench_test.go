package remember

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkRemember is one note written and mined, lexically, into a wing
// of 200 notes: the work the daemon does for POST /remember. Most of it is
// waiting for fsync (the file, its directory, the wing, the manifest).
func BenchmarkRemember(b *testing.B) {
	var notes strings.Builder
	for i := range 200 {
		fmt.Fprintf(&notes, "- Fact %d: service%d listens on port %d\n", i, i, 8000+i)
	}
	f := newFixture(b, map[string]string{"agents/pam/memory.md": notes.String()})
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		req := Request{Wing: "pam", Text: fmt.Sprintf("zq%dx is a new fact number %d", i, i), AllowDuplicate: true}
		if _, err := Remember(ctx, f.p, req, f.opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRememberLargeWing is one note checked for the same fact
// (SameFact against every note) and similar ones, written and mined, into
// a wing of 10,000 notes, lexically.
func BenchmarkRememberLargeWing(b *testing.B) {
	var notes strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&notes, "- Fact %d: service%d listens on port %d #ops\n", i, i, 8000+i)
	}
	f := newFixture(b, map[string]string{"agents/pam/memory.md": notes.String()})
	ctx := context.Background()
	if _, err := Remember(ctx, f.p, Request{Wing: "pam", Text: "warm-up"}, f.opts); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		req := Request{Wing: "pam", Text: fmt.Sprintf("zq%dx is a new fact number %d", i, i)}
		if _, err := Remember(ctx, f.p, req, f.opts); err != nil {
			b.Fatal(err)
		}
	}
}
