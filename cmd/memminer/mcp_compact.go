package main

import (
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
)

// What the model reads over MCP. Claude Code and Codex hand the model a
// tool's structuredContent, not its text, so search and wake_up return a
// compact form of the CLI's --json: sources relative to the hive, no
// absolute paths, no keys that carry nothing (nulls, false, empty lists,
// scores only the ranking needs). BENCHMARKS.md has what a five-hit search
// costs either way.

// mcpSearchResult is the search tool's structured result.
type mcpSearchResult struct {
	Query   string   `json:"query"`
	Results []mcpHit `json:"results"`
	// Explanation is the search's, as --json has it, when asked for.
	Explanation *api.Explanation `json:"explanation,omitempty"`
	// Skills are the published skills that match.
	Skills []mcpSkill `json:"skills,omitempty"`
}

// mcpSkill is a skill a search found: what a model needs to load it.
type mcpSkill struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Source      string  `json:"source"`
	Relevance   float64 `json:"relevance"`
}

// mcpHit is one search hit: what a model needs to use the note, cite it
// and supersede it.
type mcpHit struct {
	// ID is what remember's supersedes takes.
	ID   string `json:"id"`
	Wing string `json:"wing"`
	// Agent is there only when it is not the wing's name.
	Agent   string `json:"agent,omitempty"`
	Source  string `json:"source"`
	Line    int    `json:"line"`
	Heading string `json:"heading,omitempty"`
	Text    string `json:"text"`
	// Relevance is absolute, in [0, 1].
	Relevance float64 `json:"relevance"`
	govCompact
}

// govCompact is a note's governance with only the keys that say something.
type govCompact struct {
	// Date is the note's date; "modified YYYY-MM-DD" when it is the file's.
	Date   string   `json:"date,omitempty"`
	Status string   `json:"status,omitempty"`
	Review string   `json:"review,omitempty"`
	Stale  string   `json:"stale,omitempty"` // why, when the note is stale
	Tags   []string `json:"tags,omitempty"`
}

func compactGovernance(g govern.Fields) govCompact {
	c := govCompact{Date: g.DateText(), Tags: g.Tags}
	if g.Status != nil && *g.Status != string(govern.Stale) {
		c.Status = *g.Status
	}
	if g.ReviewDate != nil {
		c.Review = *g.ReviewDate
	}
	if g.Stale {
		c.Stale = "stale"
		if g.StaleReason != nil && *g.StaleReason != "" {
			c.Stale = *g.StaleReason
		}
	}
	return c
}

func compactSearch(out api.SearchResult) mcpSearchResult {
	res := mcpSearchResult{Query: out.Query, Results: make([]mcpHit, len(out.Results)), Explanation: out.Explanation}
	for i, h := range out.Results {
		hit := mcpHit{ID: h.ID, Wing: h.Wing, Source: h.Source, Line: h.Line, Heading: h.Heading, Text: h.Text,
			Relevance: h.Relevance, govCompact: compactGovernance(h.Fields)}
		if h.Agent != h.Wing {
			hit.Agent = h.Agent
		}
		res.Results[i] = hit
	}
	for _, m := range out.Skills {
		res.Skills = append(res.Skills, mcpSkill{Name: m.Name, Description: m.Description, Source: m.Source, Relevance: m.Relevance})
	}
	return res
}

// mcpDigest is the wake_up tool's structured result.
type mcpDigest struct {
	// Isolated says this machine's memory may be behind, when it is.
	Isolated  *wakeup.Isolation `json:"isolated,omitempty"`
	Handoffs  []mcpHandoff      `json:"handoffs,omitempty"`
	Identity  []mcpIdentity     `json:"identity"`
	MoreWings int               `json:"more_wings,omitempty"`
	Story     []mcpStoryItem    `json:"story"`
}

type mcpIdentity struct {
	Wing string `json:"wing"`
	Text string `json:"text"`
}

type mcpHandoff struct {
	Ref     string `json:"ref"`
	From    string `json:"from"`
	Date    string `json:"date"`
	Summary string `json:"summary"`
	Source  string `json:"source"`
	Line    int    `json:"line"`
}

type mcpStoryItem struct {
	Wing   string   `json:"wing"`
	Text   string   `json:"text"`
	Source string   `json:"source"`
	Line   int      `json:"line"`
	Also   []string `json:"also,omitempty"`
	Pinned bool     `json:"pinned,omitempty"`
	govCompact
}

func compactDigest(d wakeup.Digest) mcpDigest {
	out := mcpDigest{Identity: make([]mcpIdentity, len(d.Identity)), MoreWings: d.MoreWings, Story: make([]mcpStoryItem, len(d.Story)), Isolated: d.Isolated}
	for i, l := range d.Identity {
		out.Identity[i] = mcpIdentity{Wing: l.Wing, Text: l.Text}
	}
	for _, h := range d.Handoffs {
		out.Handoffs = append(out.Handoffs, mcpHandoff{Ref: h.Ref, From: h.From, Date: h.Date, Summary: h.Summary, Source: h.Source, Line: h.Line})
	}
	for i, it := range d.Story {
		out.Story[i] = mcpStoryItem{Wing: it.Wing, Text: it.Text, Source: it.Source, Line: it.Line, Also: it.Also, Pinned: it.Pinned,
			govCompact: compactGovernance(it.Fields)}
	}
	return out
}
