package githive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/atomicfile"
)

// DriverName is the merge driver's name in the repository's config
// (merge.<name>.driver) and in .gitattributes (merge=<name>).
const DriverName = "memminer"

// DriverCommand is the command Git runs to merge a memory file when
// memminer is on PATH: %O the common ancestor, %A ours (overwritten with
// the result), %B theirs, %P the path in the work tree.
const DriverCommand = "memminer " + driverArgs

const driverArgs = "git merge-file %O %A %B %P"

// Driver returns the driver command that runs program (DriverCommand for
// "memminer"); a program path is quoted for the shell Git runs it with.
func Driver(program string) string {
	if program == "memminer" {
		return DriverCommand
	}
	return "'" + strings.ReplaceAll(program, "'", `'\''`) + "' " + driverArgs
}

// driverLabel is merge.memminer.name, which Git shows.
const driverLabel = "memminer: merge memory files note by note"

// Lines that open and close memminer's block in .gitattributes.
const (
	blockStart = "# memminer: memory files merge note by note (memminer git setup; --remove takes this out)"
	blockEnd   = "# end memminer"
)

// AttributesFile is the name of the attributes file Setup writes, in the
// hive's directory.
const AttributesFile = ".gitattributes"

// SetupResult says what Setup or Remove changed.
type SetupResult struct {
	// Repo is the work tree's top directory.
	Repo string `json:"repo"`
	// Attributes is the .gitattributes file written (or left alone).
	Attributes string `json:"attributes"`
	// Driver is the driver command registered; "" after Remove.
	Driver string `json:"driver"`
	// Patterns are the patterns marked merge=memminer.
	Patterns []string `json:"patterns"`
	// ConfigChanged and AttributesChanged say whether anything was
	// changed; both false when it already was as asked.
	ConfigChanged     bool `json:"config_changed"`
	AttributesChanged bool `json:"attributes_changed"`
}

// Setup registers the merge driver, running program (see Driver), in the
// repository's config (merge.memminer.name and .driver) and marks the
// hive's memory files
// merge=memminer in the hive's .gitattributes, inside a block of its own
// that it replaces on a later run: running it twice changes nothing.
// Lines of .gitattributes outside the block are kept byte for byte.
func Setup(ctx context.Context, hiveDir string, globs hive.Globs, program string) (SetupResult, error) {
	r, err := Open(ctx, hiveDir)
	if err != nil {
		return SetupResult{}, err
	}
	res := SetupResult{Repo: r.Top, Attributes: filepath.Join(hiveDir, AttributesFile)}
	res.Driver = Driver(program)
	for _, kv := range [][2]string{{"name", driverLabel}, {"driver", res.Driver}} {
		key := "merge." + DriverName + "." + kv[0]
		cur, _ := git(ctx, r.Top, nil, "config", "--local", "--get", key)
		if strings.TrimSuffix(cur, "\n") == kv[1] {
			continue
		}
		if _, err := git(ctx, r.Top, nil, "config", "--local", key, kv[1]); err != nil {
			return res, err
		}
		res.ConfigChanged = true
	}
	memory, not := hive.MemoryFilePatterns(globs)
	var block []string
	block = append(block, blockStart)
	for _, p := range memory {
		block = append(block, p+" merge="+DriverName)
	}
	for _, p := range not {
		block = append(block, p+" !merge")
	}
	block = append(block, blockEnd)
	res.Patterns = memory
	res.AttributesChanged, err = rewriteBlock(res.Attributes, block)
	return res, err
}

// Remove undoes Setup: it removes the driver from the repository's config
// and memminer's block from the hive's .gitattributes (the file itself
// when nothing else is left in it).
func Remove(ctx context.Context, hiveDir string) (SetupResult, error) {
	r, err := Open(ctx, hiveDir)
	if err != nil {
		return SetupResult{}, err
	}
	res := SetupResult{Repo: r.Top, Attributes: filepath.Join(hiveDir, AttributesFile), Patterns: []string{}}
	if _, err := git(ctx, r.Top, nil, "config", "--local", "--get-regexp", `^merge\.`+DriverName+`\.`); err == nil {
		if _, err := git(ctx, r.Top, nil, "config", "--local", "--remove-section", "merge."+DriverName); err != nil {
			return res, err
		}
		res.ConfigChanged = true
	}
	res.AttributesChanged, err = rewriteBlock(res.Attributes, nil)
	return res, err
}

// rewriteBlock replaces memminer's block in the attributes file at path
// with block (removes it when block is nil), appending it when there is
// none, and reports whether the file changed.
func rewriteBlock(path string, block []string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	eol := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		eol = "\r\n"
	}
	var before, after []byte
	rest := data
	start := findLine(rest, blockStart)
	if start >= 0 {
		before = rest[:start]
		end := findLine(rest[start:], blockEnd)
		if end < 0 {
			return false, fmt.Errorf("%s: memminer's block has no %q line; fix the file by hand", path, blockEnd)
		}
		end += start
		if nl := bytes.IndexByte(rest[end:], '\n'); nl >= 0 {
			after = rest[end+nl+1:]
		}
	} else {
		before = rest
	}
	var out []byte
	out = append(out, before...)
	if len(block) > 0 {
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, eol...)
		}
		out = append(out, strings.Join(block, eol)+eol...)
	}
	out = append(out, after...)
	if bytes.Equal(out, data) {
		return false, nil
	}
	if len(bytes.TrimSpace(out)) == 0 && data != nil {
		if err := os.Remove(path); err != nil {
			return false, err
		}
		return true, nil
	}
	if err := atomicfile.Write(path, out, 0o644); err != nil {
		return false, err
	}
	return true, nil
}

// findLine returns the offset of the first line of data that is line, -1
// when none is.
func findLine(data []byte, line string) int {
	off := 0
	for off <= len(data) {
		nl := bytes.IndexByte(data[off:], '\n')
		end := len(data)
		if nl >= 0 {
			end = off + nl
		}
		if string(bytes.TrimSuffix(data[off:end], []byte("\r"))) == line {
			return off
		}
		if nl < 0 {
			break
		}
		off = end + 1
	}
	return -1
}
