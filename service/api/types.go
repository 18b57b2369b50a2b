package api

import (
	"fmt"
	"slices"
	"time"

	"github.com/memminer/memminer/clients/skill"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

// SearchRequest asks the daemon to search its palace.
type SearchRequest struct {
	// Query is the text searched for.
	Query string `json:"query"`
	// Wings limits the search; empty means every wing.
	Wings []string `json:"wings,omitempty"`
	// ExcludeWings leaves these wings out (palace.SearchOptions.ExcludeWings).
	ExcludeWings []string `json:"exclude_wings,omitempty"`
	// Results is the number of hits wanted; zero means palace.DefaultResults.
	Results int `json:"results,omitempty"`
	// Model is the model spec the caller is configured with. The daemon
	// refuses (ErrOtherModel) when it serves another model, so the caller
	// can search directly instead of getting another model's ranking.
	// Empty means whatever model the daemon serves.
	Model string `json:"model,omitempty"`

	// Governance filters; see palace.Filters. Since and Until are
	// absolute, so "7d" means the same to the caller and the daemon.
	IncludeSuperseded bool       `json:"include_superseded,omitempty"`
	IncludeInbox      bool       `json:"include_inbox,omitempty"`
	Status            string     `json:"status,omitempty"`
	Fresh             bool       `json:"fresh,omitempty"`
	Since             *time.Time `json:"since,omitempty"`
	Until             *time.Time `json:"until,omitempty"`
	Tags              []string   `json:"tags,omitempty"`
	// StaleAfter is the caller's stale_after setting, in nanoseconds
	// (govern.Never is -1); zero means govern.DefaultStaleAfter.
	StaleAfter time.Duration `json:"stale_after,omitempty"`
	// MinRelevance is the relevance floor; nil means
	// palace.DefaultMinRelevance.
	MinRelevance *float64 `json:"min_relevance,omitempty"`
	// Explain asks for each hit's evidence and, for what the floor
	// dropped, the near misses (SearchResult.Explanation).
	Explain bool `json:"explain,omitempty"`
	// Prompt asks the prompt hook's question (palace.SearchOptions.Prompt):
	// only the notes a prompt needs, most often none.
	Prompt bool `json:"prompt,omitempty"`
	// Scope keeps the search inside the caller's domains
	// (palace.SearchOptions.Scope).
	Scope palace.DomainScope `json:"scope,omitzero"`
}

// Options returns the palace search the request asks for, or an error
// naming a field it cannot read, which matches ErrBadRequest.
func (r SearchRequest) Options() (palace.SearchOptions, error) {
	opts, err := r.options()
	if err != nil {
		return opts, &badRequestError{err}
	}
	return opts, nil
}

func (r SearchRequest) options() (palace.SearchOptions, error) {
	opts := palace.SearchOptions{Wings: r.Wings, ExcludeWings: r.ExcludeWings, Results: r.Results, MinRelevance: palace.DefaultMinRelevance, Prompt: r.Prompt, Scope: r.Scope}
	f := &opts.Filters
	f.IncludeSuperseded, f.IncludeInbox, f.Fresh, f.Tags = r.IncludeSuperseded, r.IncludeInbox, r.Fresh, r.Tags
	if r.Status != "" {
		st, err := govern.ParseStatus(r.Status)
		if err != nil {
			return opts, fmt.Errorf("status: %w", err)
		}
		f.Status = st
	}
	if r.Since != nil {
		f.Since = *r.Since
	}
	if r.Until != nil {
		f.Until = *r.Until
	}
	if r.StaleAfter < 0 && r.StaleAfter != govern.Never {
		return opts, fmt.Errorf("stale_after %d is negative", r.StaleAfter)
	}
	f.StaleAfter = r.StaleAfter
	if r.MinRelevance != nil {
		if err := CheckMinRelevance(*r.MinRelevance); err != nil {
			return opts, fmt.Errorf("min_relevance %w", err)
		}
		opts.MinRelevance = *r.MinRelevance
	}
	return opts, nil
}

// CheckMinRelevance refuses a minimum relevance outside [0, 1]. It is
// written so that NaN, which compares false with everything and would
// drop no hit, is refused too.
func CheckMinRelevance(m float64) error {
	if !(m >= 0 && m <= 1) {
		return fmt.Errorf("%v is not between 0 and 1", m)
	}
	return nil
}

// SearchResult is the shape of `memminer search --json` and of the
// daemon's answer to a search.
type SearchResult struct {
	Query   string `json:"query"`
	Results []Hit  `json:"results"`
	// Skills are the published skills that match, a shelf of their own
	// (skill.Search); none for the prompt hook's question.
	Skills []skill.Match `json:"skills,omitempty"`
	// Explanation is set when the request asked for it.
	Explanation *Explanation `json:"explanation,omitempty"`
}

// Explanation is palace.Explanation as printed: figures rounded like
// scores, near misses as hits are.
type Explanation struct {
	palace.Explanation
	NearMisses []Hit `json:"near_misses"`
}

// NewExplanation is ex as printed for query: figures rounded like scores,
// near misses converted as hits are.
func NewExplanation(query string, ex *palace.Explanation) *Explanation {
	e := &Explanation{Explanation: *ex, NearMisses: NewSearchResult(query, ex.NearMisses).Results}
	e.Explanation.NearMisses = nil
	e.Words = slices.Clone(ex.Words)
	for i := range e.Words {
		e.Words[i].Cosine = roundScore(e.Words[i].Cosine)
	}
	e.Grounding = roundScore(e.Grounding)
	return e
}

// Note is a note as printed: what a search hit, `memminer show` and
// MCP's read_note say of it first.
type Note struct {
	ID    string `json:"id"`
	Wing  string `json:"wing"`
	Agent string `json:"agent"`
	// Source is the note's file: absolute here; the CLI prints it relative
	// to the hive, the same from any working directory.
	Source string `json:"source"`
	// Path is the note's file, absolute.
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Heading string `json:"heading"`
	Text    string `json:"text"`
}

// NewNote is n as printed.
func NewNote(n palace.Note) Note {
	return Note{ID: n.ID, Wing: n.Wing, Agent: n.Agent, Source: n.Source, Path: n.Source, Line: n.Line, Heading: n.Heading, Text: n.Text}
}

// Hit is one search result as printed.
type Hit struct {
	Note
	// Score is relative to the first hit; it and Relevance are rounded to
	// four decimals so output is stable.
	Score float64 `json:"score"`
	// Relevance is absolute, in [0, 1] (palace.Hit.Relevance).
	Relevance float64 `json:"relevance"`
	// Mtime is the source file's modification time as mined, RFC 3339 UTC.
	Mtime string `json:"mtime"`
	govern.Fields
	// Evidence is what Relevance was decided from, when explained.
	Evidence *palace.Evidence `json:"evidence,omitempty"`
}

// NewSearchResult converts palace hits into the printed shape. Sources stay
// absolute; a CLI may shorten them for display.
func NewSearchResult(query string, hits []palace.Hit) SearchResult {
	out := SearchResult{Query: query, Results: make([]Hit, len(hits))}
	for i, h := range hits {
		out.Results[i] = Hit{
			Note: NewNote(h.Note), Score: roundScore(h.Score), Relevance: roundScore(h.Relevance),
			Mtime:  h.Mtime.UTC().Format(time.RFC3339),
			Fields: h.Governance.Fields(h.Mtime, h.Stale, h.StaleReason),
		}
		if e := h.Evidence; e != nil {
			r := *e
			r.Coverage, r.Cosine, r.Semantic, r.Standout, r.Relevance = roundScore(r.Coverage), roundScore(r.Cosine),
				roundScore(r.Semantic), roundScore(r.Standout), roundScore(r.Relevance)
			out.Results[i].Evidence = &r
		}
	}
	return out
}

// AddSkills puts the skills found in r, relevance rounded as a hit's.
func (r *SearchResult) AddSkills(found []skill.Match) {
	for _, m := range found {
		m.Relevance = roundScore(m.Relevance)
		r.Skills = append(r.Skills, m)
	}
}

func roundScore(s float64) float64 { return float64(int(s*10000+0.5)) / 10000 }

// MineRequest hands a mine to the daemon, which holds the palace's writer
// lock. Path must be absolute: the daemon does not share the caller's
// working directory.
type MineRequest struct {
	Path   string `json:"path"`
	Wing   string `json:"wing,omitempty"`
	Agent  string `json:"agent,omitempty"`
	DryRun bool   `json:"dry_run,omitempty"`
	// Model is the caller's model spec; see SearchRequest.Model.
	Model string `json:"model,omitempty"`
	// Agents are the caller's globs of agent directories besides
	// agents/<id> (mine.Options.Agents): a hive is mined by the caller's
	// settings, as it would be without the daemon.
	Agents []string `json:"agents,omitempty"`
}

// MineResult is the shape of `memminer mine --json`.
type MineResult struct {
	mine.Summary
	Seconds float64 `json:"seconds"`
}

// NewMineResult wraps a mine summary for printing. Its lists are [] when
// empty, never null, like every list memminer prints.
func NewMineResult(s mine.Summary) MineResult {
	s.Wings = nonNil(s.Wings)
	s.Mined = nonNil(s.Mined)
	s.Problems = nonNil(s.Problems)
	s.Warnings = nonNil(s.Warnings)
	s.Repaired = nonNil(s.Repaired)
	s.Migrated = nonNil(s.Migrated)
	return MineResult{Summary: s, Seconds: s.Duration.Seconds()}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Reembed tells that a wing's vectors were replaced because the model
// changed.
type Reembed struct {
	Wing  string `json:"wing"`
	From  string `json:"from"`
	To    string `json:"to"`
	Notes int    `json:"notes"`
}

// MineReply is the daemon's answer to a MineRequest: the result as the CLI
// prints it, and the re-embeds it reports on stderr.
type MineReply struct {
	Result   MineResult `json:"result"`
	Reembeds []Reembed  `json:"reembeds"`
}

// Status is the shape of `memminer status --json`. Every key is always
// present: what does not apply is null (Daemon when no daemon answered).
type Status struct {
	Available   bool   `json:"available"`
	Enabled     bool   `json:"enabled"`
	Active      bool   `json:"active"`
	Initialized bool   `json:"initialized"`
	Model       string `json:"model"`
	// ModelError says why the model is unavailable; null when it is available.
	ModelError    *string      `json:"model_error"`
	Palace        string       `json:"palace"`
	PalaceBytes   int64        `json:"palace_bytes"`
	Notes         int          `json:"notes"`
	ConflictsOpen int          `json:"conflicts_open"`
	Wings         []WingStatus `json:"wings"`
	// InboxPending counts the notes waiting in the hive's inboxes for a
	// person's approval; PacksReviewNeeded names the packs flagged
	// "review needed", which the CLI fills from the hive.
	InboxPending      int      `json:"inbox_pending"`
	PacksReviewNeeded []string `json:"packs_review_needed"`
	// SecretsHidden counts the secrets the palace holds hidden in notes'
	// texts: found in memory files by the miner and stored as "[secret
	// hidden: KIND]", never shown (memminer doctor names each file and
	// line).
	SecretsHidden int `json:"secrets_hidden"`
	// Syncthing is the hive's Syncthing folder; null when Syncthing does
	// not answer (or no hive or Syncthing is configured).
	Syncthing *Replication `json:"syncthing"`
	Daemon    *DaemonInfo  `json:"daemon"`
}

// WingStatus is one wing in Status.
type WingStatus struct {
	palace.WingInfo
	// Domain is the wing's domain (palace.WingDomains): what its files
	// declare, the caller's domains setting winning; "global" when none.
	Domain string `json:"domain"`
	// Orphaned is set when every path the wing was mined from is gone (an
	// agent directory was removed). The wing is kept, never deleted silently.
	Orphaned bool `json:"orphaned"`
	// LastMine is the daemon's last mine of the wing; null when no daemon
	// runs or it has not mined the wing yet.
	LastMine *WingMine `json:"last_mine"`
}

// WingMine describes the daemon's last mine of a wing.
type WingMine struct {
	At           time.Time `json:"at"`
	Trigger      string    `json:"trigger"`
	Seconds      float64   `json:"seconds"`
	FilesChanged int       `json:"files_changed"`
	NotesAdded   int       `json:"notes_added"`
	NotesRemoved int       `json:"notes_removed"`
	// Error is why the mine failed; null when it did not.
	Error *string `json:"error"`
}

// DaemonInfo is what a running daemon adds to Status.
type DaemonInfo struct {
	PID           int       `json:"pid"`
	Started       time.Time `json:"started"`
	UptimeSeconds float64   `json:"uptime_seconds"`
	Hive          string    `json:"hive"`
	MineInterval  string    `json:"mine_interval"`
	// Watch says how changes are noticed: "fsnotify", "off" (mine loop
	// only) or "degraded: …" (fsnotify failed; the mine loop still runs).
	Watch    string    `json:"watch"`
	LastScan time.Time `json:"last_scan"`
	Scans    int64     `json:"scans"`
	Mines    int64     `json:"mines"`
	// Working is what the mine goroutine does right now: "mining wing ID",
	// "scanning the hive", or "mining PATH for memminer mine"; null when idle.
	Working *string `json:"working"`
	Pending Pending `json:"pending"`
	// FirstMine is how far the daemon's first mine of its hive got, while
	// it runs; null once every file it found is mined.
	FirstMine *MineProgress `json:"first_mine"`
	// Errors are files (or wings) whose last mine failed; each is retried
	// when it changes, or after a backoff that doubles with every failure.
	Errors []FileError `json:"errors"`
	// Metrics is the address of the Prometheus endpoint; null when none.
	Metrics *string `json:"metrics"`
	// Activity is what the daemon's metrics counted, as numbers.
	Activity *Activity `json:"activity"`
	// Components holds each plugged-in component's own status by name ({}
	// when none reports one).
	Components map[string]any `json:"components"`
}

// Idle reports whether the daemon has scanned its hive at least once and
// has nothing working or queued. A nil DaemonInfo (no daemon) is not idle.
func (d *DaemonInfo) Idle() bool {
	return d != nil && d.Scans > 0 && d.Working == nil && len(d.Pending.Wings) == 0 && d.Pending.Requests == 0
}

// Pending is the work the daemon has queued.
type Pending struct {
	// Wings waiting to be mined, including those still in their debounce window.
	Wings []string `json:"wings"`
	// Requests are mines handed over by `memminer mine` and not yet done.
	Requests int `json:"requests"`
}

// FileError is a file (or a whole wing) whose mine failed.
type FileError struct {
	Wing     string    `json:"wing"`
	Path     string    `json:"path"`
	Error    string    `json:"error"`
	Failures int       `json:"failures"`
	Since    time.Time `json:"since"`
	Last     time.Time `json:"last"`
	// NextRetry is the earliest tick that retries the file unless it changes first.
	NextRetry time.Time `json:"next_retry"`
}
