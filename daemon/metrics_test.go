package daemon

import (
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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
	// Prometheus's own parser reads it, with the values written.
	fams := parseExposition(t, got)
	if f := fams["x_seconds"]; f == nil || f.GetType() != dto.MetricType_HISTOGRAM || f.GetMetric()[0].GetHistogram().GetSampleCount() != 4 {
		t.Errorf("x_seconds parsed as %v", f)
	}
	if f := fams["x_total"]; f == nil || f.GetType() != dto.MetricType_COUNTER || len(f.GetMetric()) != 2 || f.GetHelp() != "Things.\nMore" {
		t.Errorf("x_total parsed as %v", f)
	}
}

// parseExposition parses text in the Prometheus text format with
// Prometheus's own parser, failing the test on any error.
func parseExposition(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, text)
	}
	return fams
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
