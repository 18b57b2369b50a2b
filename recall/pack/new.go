package pack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/memory/memfile"
)

// Spec is what pack new writes.
type Spec struct {
	Use, Avoid []Entry
	// StaleAfter is written when set ("30d"); BlockStale when true.
	StaleAfter string
	BlockStale bool
	// ReviewDate is written when set.
	ReviewDate time.Time
	// Body is the task the pack is for; a placeholder when empty.
	Body string
}

// Content is the pack file s describes.
func (s Spec) Content(name string) []byte {
	var b strings.Builder
	b.WriteString("---\n")
	list := func(key string, entries []Entry) {
		if len(entries) == 0 {
			return
		}
		b.WriteString(key + ":\n")
		for _, e := range entries {
			b.WriteString("  - " + strconv.Quote(e.String()) + "\n")
		}
	}
	list("use", s.Use)
	list("avoid", s.Avoid)
	if s.StaleAfter != "" {
		b.WriteString("stale_after: " + s.StaleAfter + "\n")
	}
	if s.BlockStale {
		b.WriteString("block_stale: true\n")
	}
	if !s.ReviewDate.IsZero() {
		b.WriteString("review_date: " + s.ReviewDate.Format(time.DateOnly) + "\n")
	}
	b.WriteString("---\n\n")
	body := strings.TrimSpace(s.Body)
	if body == "" {
		body = "The task this pack is for, in a few lines: what an agent given it is about to do."
	}
	b.WriteString(body + "\n")
	return []byte(b.String())
}

// New writes pack name into the hive, atomically, refusing (ErrExists)
// to replace a pack. What it writes is parsed back first, so it is a
// valid pack or nothing is written.
func New(hiveDir, name string, s Spec) (*Pack, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	data := s.Content(name)
	if _, err := Parse(name, fileOf(name), data); err != nil {
		return nil, err
	}
	if err := checkDir(hiveDir); err != nil {
		return nil, err
	}
	dir := Dir(hiveDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name+".md")
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%w: %s; edit it, or pick another name", ErrExists, fileOf(name))
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := atomicfile.Write(path, data, memfile.NewFileMode); err != nil {
		return nil, fmt.Errorf("write %s: %w", fileOf(name), err)
	}
	return Load(hiveDir, name)
}
