package api

import "time"

// Activity is what a daemon's metrics counted since it started, as
// numbers (the Prometheus series of its /metrics), and its last hour
// minute by minute: what the page's activity charts draw.
type Activity struct {
	// Mines are the mines run, by trigger and result
	// (memminer_mines_total).
	Mines []MineCount `json:"mines"`
	// MineSeconds, SearchSeconds and RememberSeconds are the latencies of
	// mines, of searches and of remember requests served over the control
	// socket.
	MineSeconds     Histogram `json:"mine_seconds"`
	SearchSeconds   Histogram `json:"search_seconds"`
	RememberSeconds Histogram `json:"remember_seconds"`
	// Recent are the minutes of the last hour in which something was
	// done, oldest first, each counting what; a remember is also a mine
	// (trigger request).
	Recent []Minute `json:"recent"`
}

// MineCount is how many mines ran with one trigger and result.
type MineCount struct {
	Trigger string `json:"trigger"`
	Result  string `json:"result"`
	Count   int64  `json:"count"`
}

// Histogram counts observations, in seconds, into buckets: Counts[i]
// those at most Bounds[i] and over the bound before; the last count,
// one more than the bounds, those over every bound.
type Histogram struct {
	Bounds []float64 `json:"bounds"`
	Counts []uint64  `json:"counts"`
	Count  uint64    `json:"count"`
	Sum    float64   `json:"sum"`
}

// Minute is what a daemon did in the minute starting At.
type Minute struct {
	At        time.Time `json:"at"`
	Mines     int       `json:"mines"`
	Searches  int       `json:"searches"`
	Remembers int       `json:"remembers"`
}
