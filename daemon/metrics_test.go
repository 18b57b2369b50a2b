package daemon

import (
	"regexp"
	"strings"
	"testing"
)

func TestMetricsTextFormat(t *testing.T) {
	c := newCounterVec("x_total", "Things.\nMore", "trigger", "result")
	c.add(2, "tick", "ok")
	c.add(1, "start", `we"ird`)
	h := newHistogram("x_seconds", "How long.", searchBuckets)
	for _, v := range []float64{0.0001, 0.0005, 0.003, 20} {
		h.observe(v)
	}
	var b strings.Builder
	c.write(&b)
	h.write(&b)
	got := b.String()
	for _, want := range []string{
		"# HELP x_total Things.\\nMore\n# TYPE x_total counter\n",
		`x_total{result="ok",trigger="tick"} 2` + "\n",
		`x_total{result="we\"ird",trigger="start"} 1` + "\n",
		`x_seconds_bucket{le="0.0005"} 2` + "\n", // a value on a bound counts in it
		`x_seconds_bucket{le="0.0025"} 2` + "\n",
		`x_seconds_bucket{le="0.005"} 3` + "\n",
		`x_seconds_bucket{le="10"} 3` + "\n",
		`x_seconds_bucket{le="+Inf"} 4` + "\n",
		"x_seconds_count 4\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	// Every sample line is name{labels} value.
	sampleLine := regexp.MustCompile(`^[a-z_]+(\{[a-z_]+="(?:[^"\\]|\\.)*"(,[a-z_]+="(?:[^"\\]|\\.)*")*\})? [-+0-9.eInf]+$`)
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		if !strings.HasPrefix(l, "# ") && !sampleLine.MatchString(l) {
			t.Errorf("malformed line %q", l)
		}
	}
}

// Bucket bounds print as short decimals, never as 0.0045000000000000005.
func TestBucketBoundsAreRound(t *testing.T) {
	for _, bounds := range [][]float64{mineBuckets, searchBuckets} {
		for i, v := range bounds {
			if s := formatFloat(v); len(s) > 6 {
				t.Errorf("bound %v prints as %q", v, s)
			}
			if i > 0 && v <= bounds[i-1] {
				t.Errorf("bounds not increasing at %v", v)
			}
		}
	}
}
