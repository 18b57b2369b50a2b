package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memminer/memminer/palace"
)

// HiveOptions choose how conversations become markdown.
type HiveOptions struct {
	// Captions appends the caption of an image shared with a turn to the
	// turn's bullet, as "[image: …]".
	Captions bool
	// InlineIDs starts each bullet with the turn's dia id, "[D1:3]".
	InlineIDs bool
}

// hiveFile is one conversation written as a memory file.
type hiveFile struct {
	Conv *Conversation
	Wing string
	Path string
	// Turns maps a 1-based line of the file to the canonical dia id of the
	// turn written on it.
	Turns map[int]string
}

// Markdown renders a conversation as an agent's memory file: frontmatter
// naming the conversation and its speakers, one "## Session N (date)"
// heading per session, and one bullet per dialog turn,
// "- Speaker: text" (see HiveOptions for ids and image captions). It also
// returns the line of each turn's bullet.
func Markdown(c *Conversation, opts HiveOptions) (string, map[int]string) {
	var b strings.Builder
	lines := map[int]string{}
	line := 0
	put := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
		line++
	}
	put("---")
	put("conversation: %s", c.ID)
	put("speakers: [%s, %s]", c.SpeakerA, c.SpeakerB)
	put("---")
	for _, s := range c.Sessions {
		put("")
		if s.DateTime != "" {
			put("## Session %d (%s)", s.Num, oneLine(s.DateTime))
		} else {
			put("## Session %d", s.Num)
		}
		put("")
		for _, t := range s.Turns {
			var bullet strings.Builder
			bullet.WriteString("- ")
			if opts.InlineIDs {
				fmt.Fprintf(&bullet, "[%s] ", t.DiaID)
			}
			fmt.Fprintf(&bullet, "%s: %s", oneLine(t.Speaker), oneLine(t.Text))
			if opts.Captions && strings.TrimSpace(t.Caption) != "" {
				fmt.Fprintf(&bullet, " [image: %s]", oneLine(t.Caption))
			}
			put("%s", bullet.String())
			lines[line] = canonicalDiaID(t.DiaID)
		}
	}
	return b.String(), lines
}

// oneLine folds whitespace runs, newlines included, into single spaces so
// a turn stays one bullet on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// WriteHive writes each conversation as dir/agents/<wing>/memory.md, the
// wing being the conversation's sample id, and returns the files.
func WriteHive(dir string, convs []Conversation, opts HiveOptions) ([]hiveFile, error) {
	files := make([]hiveFile, 0, len(convs))
	for i := range convs {
		c := &convs[i]
		wing, err := palace.NormalizeWingID(c.ID)
		if err != nil {
			return nil, fmt.Errorf("conversation %s: %w", c.ID, err)
		}
		md, turns := Markdown(c, opts)
		path := filepath.Join(dir, "agents", wing, "memory.md")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("write hive: %w", err)
		}
		if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
			return nil, fmt.Errorf("write hive: %w", err)
		}
		files = append(files, hiveFile{Conv: c, Wing: wing, Path: path, Turns: turns})
	}
	return files, nil
}
