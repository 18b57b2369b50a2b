package main

import (
	"context"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/memminer/memminer/service/api"
)

// activityData is the activity page: notes per wing over time, read from
// the palace, and what the daemon's metrics counted (status's
// daemon.activity), each drawn as a small chart.
type activityData struct {
	uiPage
	Notes *svgChart
	// Daemon is false when no daemon serves the palace: its metrics are
	// its own, and there are none to draw.
	Daemon                          bool
	Recent                          []*svgChart
	Mines                           *svgChart
	Latencies                       []latencyChart
	MinesTotal, Searches, Remembers uint64
}

// latencyChart is one latency histogram with its count and mean.
type latencyChart struct {
	Chart *svgChart
	Count uint64
	Mean  string
}

// svgChart is a chart drawn as inline SVG by the page's template: every
// coordinate computed here, every text escaped by html/template.
type svgChart struct {
	Title  string
	W, H   int
	Bars   []svgBar
	Lines  []svgLine
	Labels []svgLabel
	// Axis is the y of the x axis, Left the x of the y axis.
	Axis, Left float64
	Legend     []svgLine
}

type svgBar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type svgLine struct {
	Class, Name, Points string
}

type svgLabel struct {
	X, Y   float64
	Anchor string
	Text   string
}

// Chart geometry: the drawing's size and the margins kept for labels.
const (
	chartW      = 640
	chartLeft   = 44.0
	chartRight  = 8.0
	chartTop    = 8.0
	chartBottom = 22.0
	// chartPoints is how many dates the notes chart samples.
	chartPoints = 60
	// chartWings is how many wings the notes chart draws one by one; the
	// others are summed.
	chartWings = 8
)

func round1(f float64) float64 { return math.Round(f*10) / 10 }

// frame is a chart of height h with its y axis labelled 0 to top.
func frame(title string, h int, top float64) *svgChart {
	c := &svgChart{Title: title, W: chartW, H: h, Axis: float64(h) - chartBottom, Left: chartLeft}
	c.Labels = append(c.Labels,
		svgLabel{X: chartLeft - 4, Y: c.Axis, Anchor: "end", Text: "0"},
		svgLabel{X: chartLeft - 4, Y: chartTop + 8, Anchor: "end", Text: strconv.FormatFloat(top, 'f', -1, 64)})
	return c
}

// y is where value v of a chart topped at top is drawn.
func (c *svgChart) y(v, top float64) float64 {
	if top <= 0 {
		return c.Axis
	}
	return round1(c.Axis - v/top*(c.Axis-chartTop))
}

// barChart draws one bar per value, labelled under the bar by labels
// (every step-th, to leave room).
func barChart(title string, h int, labels []string, values []float64, titles []string, step int) *svgChart {
	top := slices.Max(append([]float64{0}, values...))
	c := frame(title, h, top)
	width := (chartW - chartLeft - chartRight) / float64(max(len(values), 1))
	for i, v := range values {
		x := chartLeft + float64(i)*width
		y := c.y(v, top)
		c.Bars = append(c.Bars, svgBar{X: round1(x + width*0.1), Y: y, W: round1(width * 0.8), H: round1(c.Axis - y), Class: "s0", Title: titles[i]})
		if step > 0 && i%step == 0 {
			c.Labels = append(c.Labels, svgLabel{X: round1(x + width/2), Y: c.Axis + 14, Anchor: "middle", Text: labels[i]})
		}
	}
	return c
}

// activity draws the activity page.
func (u *uiServer) activity(w http.ResponseWriter, r *http.Request) {
	d := activityData{uiPage: u.page("Activity", "activity")}
	notes, err := u.a.notesOverTime(r.Context(), time.Now())
	if err != nil {
		d.Errors = append(d.Errors, "notes: "+err.Error())
	}
	d.Notes = notes
	st, err := u.a.status(r.Context())
	if err != nil {
		d.Errors = append(d.Errors, "status: "+err.Error())
	}
	if st.Daemon != nil && st.Daemon.Activity != nil {
		d.Daemon = true
		d.daemonCharts(*st.Daemon.Activity, time.Now())
	}
	u.render(w, "activity", d)
}

// lastHour is the hour up to now's minute, minute by minute, with the
// counts of recent (the minutes in which something was done).
func lastHour(recent []api.Minute, now time.Time) []api.Minute {
	end := now.UTC().Truncate(time.Minute)
	hour := make([]api.Minute, 60)
	for i := range hour {
		hour[i].At = end.Add(time.Duration(i-59) * time.Minute)
	}
	for _, m := range recent {
		if i := 59 - int(end.Sub(m.At)/time.Minute); i >= 0 && i < 60 && m.At.Equal(hour[i].At) {
			hour[i] = m
		}
	}
	return hour
}

// daemonCharts draws what the daemon's metrics counted, its last hour
// ending at now.
func (d *activityData) daemonCharts(act api.Activity, now time.Time) {
	kinds := []struct {
		one, title string
		count      func(api.Minute) int
	}{
		{"mine", "mines", func(m api.Minute) int { return m.Mines }},
		{"search", "searches", func(m api.Minute) int { return m.Searches }},
		{"remember", "remembers", func(m api.Minute) int { return m.Remembers }},
	}
	hour := lastHour(act.Recent, now)
	for _, k := range kinds {
		var labels, titles []string
		var values []float64
		for _, m := range hour {
			at := m.At.Local().Format("15:04")
			labels = append(labels, at)
			values = append(values, float64(k.count(m)))
			titles = append(titles, at+": "+strconv.Itoa(k.count(m))+" "+plural(k.count(m), k.one, k.title))
		}
		d.Recent = append(d.Recent, barChart(k.title+" per minute, the last hour", 90, labels, values, titles, 10))
	}
	var labels, titles []string
	var values []float64
	for _, m := range act.Mines {
		labels = append(labels, m.Trigger+" "+m.Result)
		values = append(values, float64(m.Count))
		titles = append(titles, m.Trigger+", "+m.Result+": "+strconv.FormatInt(m.Count, 10))
		d.MinesTotal += uint64(m.Count)
	}
	d.Mines = barChart("mines by trigger and result, since the daemon started", 120, labels, values, titles, 1)
	for _, h := range []struct {
		title string
		h     api.Histogram
	}{{"search latency", act.SearchSeconds}, {"remember latency", act.RememberSeconds}, {"mine duration", act.MineSeconds}} {
		d.Latencies = append(d.Latencies, latencyOf(h.title, h.h))
	}
	d.Searches, d.Remembers = act.SearchSeconds.Count, act.RememberSeconds.Count
}

// latencyOf draws histogram h: one bar per bucket, labelled by its bound.
func latencyOf(title string, h api.Histogram) latencyChart {
	var labels, titles []string
	var values []float64
	for i, n := range h.Counts {
		label := "more"
		if i < len(h.Bounds) {
			label = "≤" + humanSeconds(h.Bounds[i])
		}
		labels = append(labels, label)
		values = append(values, float64(n))
		titles = append(titles, label+": "+strconv.FormatUint(n, 10))
	}
	lc := latencyChart{Chart: barChart(title+" (count per bucket)", 120, labels, values, titles, 2), Count: h.Count, Mean: "none yet"}
	if h.Count > 0 {
		lc.Mean = humanSeconds(h.Sum / float64(h.Count))
	}
	return lc
}

// humanSeconds is a duration in seconds as a person reads it.
func humanSeconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond * 100).String()
}

// notesOverTime draws the notes of each wing over time: at each of
// chartPoints dates from the oldest note's to now, how many of the notes
// the palace holds now are dated then or earlier (a note's date is what
// search and wake-up take: written in it, else its file's mtime).
func (a *app) notesOverTime(ctx context.Context, now time.Time) (*svgChart, error) {
	p, err := a.readPalace(ctx)
	if err != nil || p == nil {
		return nil, err
	}
	defer p.Close()
	type wingDates struct {
		id    string
		dates []int64 // Unix days, sorted
	}
	var wings []wingDates
	first, last := now.Unix()/86400, now.Unix()/86400
	for _, wi := range p.Wings() {
		mtimes := map[string]time.Time{}
		for _, s := range p.SourceHeads(wi.ID) {
			mtimes[s.Path] = s.Mtime
		}
		wd := wingDates{id: wi.ID}
		for _, n := range p.Notes(wi.ID) {
			day := first
			if when := n.Governance.When(mtimes[n.Source]); !when.IsZero() {
				day = when.Unix() / 86400
			}
			wd.dates = append(wd.dates, day)
		}
		if len(wd.dates) == 0 {
			continue
		}
		slices.Sort(wd.dates)
		first, last = min(first, wd.dates[0]), max(last, wd.dates[len(wd.dates)-1])
		wings = append(wings, wd)
	}
	if len(wings) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(wings, func(x, y wingDates) int { return len(y.dates) - len(x.dates) })
	if len(wings) > chartWings {
		other := wingDates{id: strconv.Itoa(len(wings)-chartWings+1) + " other wings"}
		for _, w := range wings[chartWings-1:] {
			other.dates = append(other.dates, w.dates...)
		}
		slices.Sort(other.dates)
		wings = append(wings[:chartWings-1], other)
	}
	days := make([]int64, 0, chartPoints)
	for i := range chartPoints {
		days = append(days, first+(last-first)*int64(i)/int64(chartPoints-1))
	}
	top := float64(len(wings[0].dates))
	c := frame("notes per wing over time (the notes the palace holds, by their date)", 200, top)
	span := chartW - chartLeft - chartRight
	for k, w := range wings {
		var pts []byte
		for i, day := range days {
			n, _ := slices.BinarySearch(w.dates, day+1) // the notes dated day or before
			x := round1(chartLeft + span*float64(i)/float64(chartPoints-1))
			pts = strconv.AppendFloat(pts, x, 'f', -1, 64)
			pts = append(pts, ',')
			pts = strconv.AppendFloat(pts, c.y(float64(n), top), 'f', -1, 64)
			pts = append(pts, ' ')
		}
		line := svgLine{Class: "s" + strconv.Itoa(k), Name: w.id + ": " + strconv.Itoa(len(w.dates)) + " " + plural(len(w.dates), "note", "notes"), Points: string(pts)}
		c.Lines = append(c.Lines, line)
		c.Legend = append(c.Legend, line)
	}
	for _, i := range []int{0, chartPoints / 2, chartPoints - 1} {
		anchor := map[int]string{0: "start", chartPoints - 1: "end"}[i]
		if anchor == "" {
			anchor = "middle"
		}
		c.Labels = append(c.Labels, svgLabel{X: round1(chartLeft + span*float64(i)/float64(chartPoints-1)), Y: c.Axis + 14, Anchor: anchor,
			Text: time.Unix(days[i]*86400, 0).UTC().Format(time.DateOnly)})
	}
	return c, nil
}
