package harness

import (
	"math"
	"slices"
	"time"
)

// Percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of ds, 0
// when there are none; ds is left as it is. Percentile(ds, 50) is the
// lower of the two middle values of an even count.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// Spread is the middle and the range of a set of timings.
type Spread struct {
	// Median is the middle value, the upper of the two middle values of an
	// even count.
	Median, Min, Max time.Duration
}

// SpreadOf is the spread of ds (zero when there are none); ds is left as it
// is.
func SpreadOf(ds []time.Duration) Spread {
	if len(ds) == 0 {
		return Spread{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return Spread{Median: s[len(s)/2], Min: s[0], Max: s[len(s)-1]}
}

// Round rounds each of the spread's times to a multiple of m.
func (s Spread) Round(m time.Duration) Spread {
	return Spread{Median: s.Median.Round(m), Min: s.Min.Round(m), Max: s.Max.Round(m)}
}

// Time calls f n times and returns how long each call took; it stops at
// the first error.
func Time(n int, f func() error) ([]time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := f(); err != nil {
			return ds, err
		}
		ds = append(ds, time.Since(t0))
	}
	return ds, nil
}
