package mine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/palace"
)

// planJobs resolves path and says what a mine of it mines: a hive one job
// per agent directory (with the matched directories that are no agents,
// to report), anything else one job into one wing.
func planJobs(path string, opts Options) ([]job, []Problem, error) {
	root, info, globs, err := resolveRoot(path, opts)
	if err != nil {
		return nil, nil, err
	}
	if h, isHive := hive.MinedAsHive(root, info, globs, opts.Hive); isHive && opts.Wing == "" {
		if opts.Agent != "" {
			return nil, nil, fmt.Errorf("mine %s: %w", path, ErrAgentNeedsWing)
		}
		jobs, skipped, err := hiveJobs(h)
		if err != nil {
			return nil, nil, fmt.Errorf("mine %s: %w", path, err)
		}
		return jobs, skipped, nil
	}
	j, err := wingJob(path, root, info, globs, opts)
	if err != nil {
		return nil, nil, err
	}
	return []job{j}, nil, nil
}

// resolveRoot resolves path (symlinks too), stats it and reads the
// agents globs of opts.
func resolveRoot(path string, opts Options) (string, fs.FileInfo, hive.Globs, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, hive.Globs{}, fmt.Errorf("mine %s: %w", path, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", nil, hive.Globs{}, fmt.Errorf("mine %s: %w", path, unwrapPathErr(err))
	}
	info, err := os.Stat(root)
	if err != nil {
		return "", nil, hive.Globs{}, fmt.Errorf("mine %s: %w", path, unwrapPathErr(err))
	}
	globs, err := hive.NewGlobs(opts.Agents)
	if err != nil {
		return "", nil, hive.Globs{}, fmt.Errorf("mine %s: %w", path, err)
	}
	return root, info, globs, nil
}

// HiveWing is a wing a mine mines from an agent directory of a hive.
type HiveWing struct {
	// Hive is the hive's directory (absolute, symlinks resolved).
	Hive string
	// Wing is the wing the agent directory is mined into.
	Wing string
}

// HiveWings lists the wings a mine of path with opts mines from agent
// directories of a hive, with that hive: every agent of a hive (or of its
// agents/ directory), or the one agent directory path is. Such a mine
// takes the wing over from the same place in a copy of the hive mined
// before it. It is nil when path is mined as any other markdown, or
// cannot be mined at all.
func HiveWings(path string, opts Options) []HiveWing {
	jobs, _, err := planJobs(path, opts)
	if err != nil {
		return nil
	}
	var out []HiveWing
	for _, j := range jobs {
		if j.hive != nil {
			out = append(out, HiveWing{Hive: j.hive.Dir(), Wing: j.wing})
		}
	}
	return out
}

// wingJob is the job of a mine of root (resolved; a file or a directory)
// into one wing: Options.Wing, or the name of the agent directory root is
// or lies in.
func wingJob(path, root string, info fs.FileInfo, globs hive.Globs, opts Options) (job, error) {
	dir := root
	if !info.IsDir() {
		dir = filepath.Dir(root)
	}
	name := opts.Wing
	if name == "" {
		name = filepath.Base(dir)
	}
	wing, err := palace.NormalizeWingID(name)
	switch {
	case err != nil && opts.Wing == "":
		return job{}, fmt.Errorf("mine %s: the directory name gives no usable wing id: %w", path, err)
	case err != nil:
		return job{}, fmt.Errorf("mine %s: %w", path, err)
	case !info.IsDir() && hive.IsConflictCopy(root):
		return job{}, fmt.Errorf("mine %s: this is a Syncthing conflict copy, not memory; merge it into the original and delete it", path)
	}
	if opts.Wing == "" {
		if _, self := hive.InAgentDir(dir, globs, opts.Hive); !self {
			return job{}, &needsWingError{path}
		}
	}
	// The configured hive, opened once for both: nil when none is, or it
	// cannot be opened.
	var configured *hive.Hive
	if opts.Hive != "" {
		if h, err := hive.Open(opts.Hive, opts.Agents); err == nil {
			configured = h
		}
	}
	j := job{wing: wing, root: root, isDir: info.IsDir(), real: dir, base: agentBase(root, info.IsDir(), configured)}
	if j.isDir {
		j.hive, j.place = agentPlace(root, configured, opts.Agents)
	}
	return j, nil
}

// agentPlace returns the hive that agent directory root lies in and
// root's place in it, '/'-separated: the configured hive (nil when none)
// when root is one of its agent directories, else the hive whose agents/
// directory holds root, with the agents globs. It returns nil when root
// is no agent directory of a known hive.
func agentPlace(root string, configured *hive.Hive, agents []string) (*hive.Hive, string) {
	if configured != nil {
		if loc := configured.Locate(root); loc.Err == nil && loc.Rel == "" {
			return configured, loc.AgentDir
		}
	}
	parent := filepath.Dir(root)
	if filepath.Base(parent) != hive.DefaultDir {
		return nil, ""
	}
	h, err := hive.Open(filepath.Dir(parent), agents)
	if err != nil {
		return nil, ""
	}
	return h, hive.DefaultDir + "/" + filepath.Base(root)
}

type job struct {
	wing  string
	root  string // resolved absolute path
	isDir bool
	// real is the directory the job's files must really lie in, resolved
	// when the job was planned: root, or the directory of a file root;
	// a link the hive follows to an agent directory resolved. A file that
	// resolves elsewhere when read is not read (readFile).
	real string
	// base is the agent directory the job's files are named relative to
	// in note ids: root for an agent directory.
	base string
	// hive is the hive whose agent directory root is, at place in it
	// ('/'-separated); nil when root is no agent directory of a known hive.
	hive  *hive.Hive
	place string

	// files and problems are what collecting the job's files found, once
	// collected is set; listing is the stat of root that proves the
	// collection current while it matches (collectListing), nil if none.
	collected bool
	files     []candidate
	problems  []Problem
	listing   fs.FileInfo
}

type candidate struct {
	path string
	info fs.FileInfo
}
