package memminer_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/fzipp/gocyclo"
)

// maxComplexity is the most branches one function may hold
// (cyclomatic complexity): past it, a function is a sequence of named
// steps, each in one place.
const maxComplexity = 30

// exempt are the files the limit does not hold for: tests, test helpers
// (testutil and the packages named *test), benchmarks and test data.
var exempt = regexp.MustCompile(`(_test\.go$|^bench/|(^|/)testdata/|(^|/)testutil/|test/[^/]+\.go$)`)

// TestComplexity lists every function outside tests and benchmarks whose
// cyclomatic complexity is over maxComplexity.
func TestComplexity(t *testing.T) {
	stats := gocyclo.Analyze([]string{"."}, exempt)
	if len(stats) == 0 {
		t.Fatal("no function analysed")
	}
	var over []string
	for _, s := range stats.SortAndFilter(-1, maxComplexity) {
		over = append(over, s.String())
	}
	if len(over) > 0 {
		t.Errorf("%d functions over cyclomatic complexity %d; split them into named steps:\n%s",
			len(over), maxComplexity, strings.Join(over, "\n"))
	}
}
