package daemon

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memminer/memminer/service/api"
)

// timelineMinutes is how far back a timeline remembers.
const timelineMinutes = 60

// What a timeline counts.
const (
	countMine = iota
	countSearch
	countRemember
)

// timeline counts what the daemon does minute by minute over the last
// timelineMinutes: a ring of one slot per minute, a slot reused when its
// minute comes round again.
type timeline struct {
	mu    sync.Mutex
	slots [timelineMinutes]struct {
		minute int64 // Unix minutes; the slot is empty unless it matches
		counts [3]int
	}
}

func (t *timeline) add(now time.Time, what int) {
	m := now.Unix() / 60
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.slots[m%timelineMinutes]
	if s.minute != m {
		s.minute, s.counts = m, [3]int{}
	}
	s.counts[what]++
}

// last returns the minutes of the last timelineMinutes, up to now's, in
// which something was counted, oldest first.
func (t *timeline) last(now time.Time) []api.Minute {
	end := now.Unix() / 60
	out := []api.Minute{}
	t.mu.Lock()
	defer t.mu.Unlock()
	for m := end - timelineMinutes + 1; m <= end; m++ {
		if s := t.slots[m%timelineMinutes]; s.minute == m {
			out = append(out, api.Minute{At: time.Unix(m*60, 0).UTC(), Mines: s.counts[countMine], Searches: s.counts[countSearch], Remembers: s.counts[countRemember]})
		}
	}
	return out
}

// snapshot is h as numbers.
func (h *histogram) snapshot() api.Histogram {
	h.mu.Lock()
	defer h.mu.Unlock()
	return api.Histogram{Bounds: h.bounds, Counts: append([]uint64(nil), h.counts...), Count: h.count, Sum: h.sum}
}

// activity is what the metrics counted, as numbers, at now.
func (m *metrics) activity(now time.Time) *api.Activity {
	a := &api.Activity{Mines: []api.MineCount{}, MineSeconds: m.mineSeconds.snapshot(), SearchSeconds: m.searchSeconds.snapshot(),
		RememberSeconds: m.rememberSeconds.snapshot(), Recent: m.recent.last(now)}
	m.mines.mu.Lock()
	for k, v := range m.mines.values {
		trigger, result, _ := strings.Cut(k, "\x00")
		a.Mines = append(a.Mines, api.MineCount{Trigger: trigger, Result: result, Count: int64(v)})
	}
	m.mines.mu.Unlock()
	slices.SortFunc(a.Mines, func(x, y api.MineCount) int {
		return strings.Compare(x.Trigger+"\x00"+x.Result, y.Trigger+"\x00"+y.Result)
	})
	return a
}
