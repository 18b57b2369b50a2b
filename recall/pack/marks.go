package pack

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/memory/memfile"
)

// Kinds of mark in a pack's validation log.
const (
	Good     = "good"     // the pack served its task
	Bad      = "bad"      // it did not: missing, wrong or stale context
	Reviewed = "reviewed" // a person reviewed it: clears "review needed"
	Used     = "used"     // it was rendered
)

// ReviewAfter is how many bad marks in a row, with no good or reviewed
// mark and no edit of the pack between them, flag a pack "review needed".
const ReviewAfter = 3

// ErrBadMark means a mark is not good, bad or reviewed.
var ErrBadMark = errors.New("unknown mark")

// Mark is one line of a pack's validation log.
type Mark struct {
	Time time.Time
	Kind string
	// By is who marked it; Note why.
	By, Note string
}

// line renders m as its log line: "TIME KIND BY: NOTE".
func (m Mark) line() string {
	s := m.Time.UTC().Format(time.RFC3339) + " " + m.Kind + " " + m.By
	if m.Note != "" {
		s += ": " + m.Note
	}
	return s + "\n"
}

// LogFile is a pack's validation log, beside it: packs/<name>.marks.
func LogFile(hiveDir, name string) string { return filepath.Join(Dir(hiveDir), name+".marks") }

// maxMarksBytes bounds what Marks reads of a log: years of marks.
const maxMarksBytes = 16 << 20

// Marks reads the validation log of pack name, oldest first; none when it
// has no log yet. Lines it cannot read are skipped.
func Marks(hiveDir, name string) ([]Mark, error) {
	// In the shared hive: a link or a FIFO put in its place is refused
	// (the prompt and pre-action hooks read it).
	data, err := hivefile.ReadLimited(LogFile(hiveDir, name), maxMarksBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Mark
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), MaxBytes)
	for sc.Scan() {
		fields := strings.SplitN(strings.TrimSpace(sc.Text()), " ", 3)
		if len(fields) < 2 {
			continue
		}
		t, err := time.Parse(time.RFC3339, fields[0])
		if err != nil {
			continue
		}
		m := Mark{Time: t, Kind: fields[1]}
		if len(fields) == 3 {
			m.By, m.Note, _ = strings.Cut(fields[2], ": ")
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// ParseMark checks a mark as a person gives it: good, bad or reviewed.
func ParseMark(s string) (string, error) {
	switch k := strings.ToLower(strings.TrimSpace(s)); k {
	case Good, Bad, Reviewed:
		return k, nil
	}
	return "", fmt.Errorf("%w %q: want good, bad or reviewed", ErrBadMark, s)
}

// AddMark appends m to the validation log of pack name: the one writer
// of the log holds the packs directory's lock, and the log is replaced
// atomically, every earlier line kept.
func AddMark(ctx context.Context, hiveDir, name string, m Mark) error {
	if m.Kind != Used {
		if _, err := ParseMark(m.Kind); err != nil {
			return err
		}
	}
	m.By = strings.Join(strings.Fields(strings.ReplaceAll(m.By, ":", "-")), "-")
	if m.By == "" {
		m.By = "-"
	}
	m.Note = strings.Join(strings.Fields(m.Note), " ")
	if err := checkDir(hiveDir); err != nil {
		return err
	}
	dir := Dir(hiveDir)
	unlock, err := memfile.Lock(ctx, dir)
	if err != nil {
		return fmt.Errorf("mark pack %s: %w", name, err)
	}
	defer unlock()
	path := LogFile(hiveDir, name)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("mark pack %s: %w", name, err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	data = append(data, m.line()...)
	if err := atomicfile.Write(path, data, memfile.NewFileMode); err != nil {
		return fmt.Errorf("mark pack %s: %w", name, err)
	}
	return nil
}

// State is what a pack's log and file say of it.
type State struct {
	// LastUsed is when it was last rendered; nil when never.
	LastUsed *time.Time `json:"last_used"`
	// Good and Bad count its marks; BadInARow the bad marks since the last
	// good or reviewed mark and the last edit of the pack.
	Good      int `json:"good"`
	Bad       int `json:"bad"`
	BadInARow int `json:"bad_in_a_row"`
	// ReviewNeeded is set when BadInARow reaches ReviewAfter.
	ReviewNeeded bool `json:"review_needed"`
	// LastBad is the last bad mark's note, for the warning.
	LastBad *string `json:"last_bad"`
}

// StateOf is the state of p given its marks (oldest first).
func StateOf(p *Pack, marks []Mark) State {
	var s State
	for _, m := range marks {
		switch m.Kind {
		case Used:
			t := m.Time
			s.LastUsed = &t
		case Good:
			s.Good++
			s.BadInARow = 0
		case Reviewed:
			s.BadInARow = 0
		case Bad:
			s.Bad++
			// The log has whole seconds: a mark in the second of an edit counts.
			if !m.Time.Before(p.Modified.Truncate(time.Second)) {
				s.BadInARow++
				note := m.Note
				s.LastBad = &note
			}
		}
	}
	if s.BadInARow == 0 {
		s.LastBad = nil
	}
	s.ReviewNeeded = s.BadInARow >= ReviewAfter
	return s
}
