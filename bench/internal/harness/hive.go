package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/memminer/memminer/bench/hivegen"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

// Workspace is a temporary directory holding a generated hive (Dir/hive)
// and the place of its palace (Dir/palace).
type Workspace struct {
	Dir, Hive, Palace string
	// IDs are the hive's agents, which are the palace's wings.
	IDs []string
}

// NewWorkspace makes a temporary directory named after prefix and writes a
// hive generated with opts into it. Close removes it.
func NewWorkspace(prefix string, opts hivegen.Options) (*Workspace, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	w := &Workspace{Dir: dir, Hive: filepath.Join(dir, "hive"), Palace: filepath.Join(dir, "palace")}
	if w.IDs, err = hivegen.Write(w.Hive, opts); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("generate hive: %w", err)
	}
	return w, nil
}

// Close removes the workspace.
func (w *Workspace) Close() error { return os.RemoveAll(w.Dir) }

// Env is base with the palace and the embedding model of memminer
// processes set, and extra (KEY=value) after them.
func Env(base []string, palaceDir, model string, extra ...string) []string {
	env := append(slices.Clone(base), "MEMMINER_PALACE_PATH="+palaceDir, "MEMMINER_EMBEDDING_MODEL="+model)
	return append(env, extra...)
}

// AppendFile appends text to the file at path, as an editor adding to a
// memory file would; the file must exist.
func AppendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Mine opens (or creates) the palace at dir with e (nil: lexical) and mines
// hive into it in this process. The palace is returned open; a file the
// miner could not read is an error.
func Mine(ctx context.Context, dir, hive string, e embed.Embedder) (*palace.Palace, error) {
	p, err := palace.Open(ctx, dir, palace.Options{Embedder: e})
	if err != nil {
		return nil, fmt.Errorf("open palace: %w", err)
	}
	sum, err := mine.Mine(ctx, p, hive, mine.Options{})
	if err == nil && len(sum.Problems) > 0 {
		err = fmt.Errorf("%s: %s", sum.Problems[0].Path, sum.Problems[0].Err)
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("mine: %w", err)
	}
	return p, nil
}

// MineTemp is Mine into a fresh palace in a new directory under tmp. done
// closes the palace and removes the directory.
func MineTemp(ctx context.Context, tmp, hive string, e embed.Embedder) (p *palace.Palace, done func(), err error) {
	dir, err := os.MkdirTemp(tmp, "palace-")
	if err != nil {
		return nil, nil, err
	}
	if p, err = Mine(ctx, filepath.Join(dir, "p"), hive, e); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return p, func() { p.Close(); os.RemoveAll(dir) }, nil
}
