package wakeup

import (
	"testing"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/mine"
)

// BenchmarkBuild times Build on a generated palace of 10,000 notes in 20
// wings, lexical and with 512-d vectors (the built-in model's size).
func BenchmarkBuild(b *testing.B) {
	for _, bc := range []struct {
		name string
		dim  int
	}{{"lexical", 0}, {"vectors-512", 512}} {
		b.Run(bc.name, func(b *testing.B) {
			hive := genHive(b, 20, 500)
			// An untyped nil for lexical: a nil *Hashing in the interface
			// would be an embedder.
			var e embed.Embedder
			if bc.dim > 0 {
				e = &embedtest.Hashing{Dim: bc.dim}
			}
			p := minePalace(b, hive, e, mine.Options{})
			b.ResetTimer()
			for b.Loop() {
				if _, err := Build(p, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
