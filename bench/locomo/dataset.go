package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Conversation is one LoCoMo sample: two speakers, dated sessions of dialog
// turns, and questions whose evidence points at turns.
type Conversation struct {
	// ID is the sample id, e.g. "conv-26".
	ID       string
	SpeakerA string
	SpeakerB string
	// Sessions are in session-number order; sessions without turns are left out.
	Sessions  []Session
	Questions []Question
}

// Session is one dated conversation session.
type Session struct {
	Num      int
	DateTime string
	Turns    []Turn
}

// Turn is one dialog turn.
type Turn struct {
	// DiaID is the turn's id as the data spells it, "D<session>:<turn>".
	DiaID   string
	Speaker string
	Text    string
	// Caption is the BLIP caption of an image shared with the turn, if any.
	Caption string
}

// Question is one LoCoMo question with its evidence turns.
type Question struct {
	Text     string
	Category int
	// Evidence holds the canonical dia ids of the evidence turns
	// (see parseEvidence); empty when the data gives none.
	Evidence []string
}

// rawSample mirrors one element of locomo10.json.
type rawSample struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []struct {
		Question string   `json:"question"`
		Category int      `json:"category"`
		Evidence []string `json:"evidence"`
	} `json:"qa"`
}

type rawTurn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	Caption string `json:"blip_caption"`
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// LoadFile reads a LoCoMo JSON file.
func LoadFile(path string) ([]Conversation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open LoCoMo data: %w", err)
	}
	defer f.Close()
	convs, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return convs, nil
}

// Load decodes LoCoMo JSON (an array of samples).
func Load(r io.Reader) ([]Conversation, error) {
	var raw []rawSample
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("decode LoCoMo JSON: %w", err)
	}
	out := make([]Conversation, 0, len(raw))
	for i, s := range raw {
		c, err := convert(s)
		if err != nil {
			return nil, fmt.Errorf("sample %d (%s): %w", i, s.SampleID, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func convert(s rawSample) (Conversation, error) {
	c := Conversation{ID: s.SampleID}
	if c.ID == "" {
		return c, fmt.Errorf("no sample_id")
	}
	str := func(key string) (string, error) {
		v, ok := s.Conversation[key]
		if !ok {
			return "", nil
		}
		var out string
		if err := json.Unmarshal(v, &out); err != nil {
			return "", fmt.Errorf("%s: %w", key, err)
		}
		return out, nil
	}
	var err error
	if c.SpeakerA, err = str("speaker_a"); err != nil {
		return c, err
	}
	if c.SpeakerB, err = str("speaker_b"); err != nil {
		return c, err
	}
	for key, v := range s.Conversation {
		m := sessionKey.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		num, _ := strconv.Atoi(m[1])
		var turns []rawTurn
		if err := json.Unmarshal(v, &turns); err != nil {
			return c, fmt.Errorf("%s: %w", key, err)
		}
		if len(turns) == 0 {
			continue
		}
		date, err := str(key + "_date_time")
		if err != nil {
			return c, err
		}
		sess := Session{Num: num, DateTime: strings.TrimSpace(date)}
		for _, t := range turns {
			sess.Turns = append(sess.Turns, Turn{DiaID: t.DiaID, Speaker: t.Speaker, Text: t.Text, Caption: t.Caption})
		}
		c.Sessions = append(c.Sessions, sess)
	}
	sort.Slice(c.Sessions, func(i, j int) bool { return c.Sessions[i].Num < c.Sessions[j].Num })
	for _, q := range s.QA {
		var ev []string
		for _, e := range q.Evidence {
			ev = append(ev, parseEvidence(e)...)
		}
		c.Questions = append(c.Questions, Question{Text: q.Question, Category: q.Category, Evidence: ev})
	}
	return c, nil
}

var evidenceID = regexp.MustCompile(`D:?(\d+):0*(\d+)`)

// parseEvidence reads the dia ids in one evidence string. The data mostly
// holds one id per string ("D1:3"), but some strings hold several
// ("D8:6; D9:17", "D9:1 D4:4") or are misspelt ("D:11:26", "D30:05"); ids
// are returned in canonical form ("D11:26", "D30:5"). A string with no id
// ("D") gives none.
func parseEvidence(s string) []string {
	var out []string
	for _, m := range evidenceID.FindAllStringSubmatch(s, -1) {
		out = append(out, "D"+trimZeros(m[1])+":"+trimZeros(m[2]))
	}
	return out
}

func trimZeros(s string) string {
	t := strings.TrimLeft(s, "0")
	if t == "" {
		return "0"
	}
	return t
}

// canonicalDiaID puts a turn's dia id in the form parseEvidence returns.
func canonicalDiaID(id string) string {
	if ids := parseEvidence(id); len(ids) == 1 {
		return ids[0]
	}
	return id
}

// sessionOf returns the session number of a canonical dia id, or -1.
func sessionOf(diaID string) int {
	m := evidenceID.FindStringSubmatch(diaID)
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return n
}
