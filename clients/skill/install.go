package skill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Marker is the file a skill folder installed into a client holds: the
// hive it came from. Install replaces and Remove deletes only folders
// holding it, so a skill of the user's own is never touched.
const Marker = ".memminer-skill"

// Installed is what Install or Remove did in a client's skills folder.
type Installed struct {
	// Dir is the client's skills folder.
	Dir string `json:"dir"`
	// Installed are the published skills copied in, Removed those taken
	// out (deprecated, or everything on Remove).
	Installed []string `json:"installed"`
	Removed   []string `json:"removed"`
	// Kept are published skills not installed because the client holds a
	// skill of that name that memminer did not install.
	Kept []string `json:"kept"`
}

// OrNil is in, or nil when nothing was installed, removed or kept.
func (in Installed) OrNil() *Installed {
	if len(in.Installed)+len(in.Removed)+len(in.Kept) == 0 {
		return nil
	}
	return &in
}

// Install brings the client's skills folder dir in step with the hive's
// published skills: each is copied in whole (SKILL.md and the files
// beside it; a link in a skill is refused), replacing the copy installed
// before, and the copies of skills no longer published are removed.
func Install(dir, hiveDir string) (Installed, error) {
	out := Installed{Dir: dir, Installed: []string{}, Removed: []string{}, Kept: []string{}}
	published, err := PublishedSkills(hiveDir)
	if err != nil {
		return out, err
	}
	want := map[string]bool{}
	for _, s := range published {
		want[s.Name] = true
		dst := filepath.Join(dir, s.Name)
		if _, err := os.Lstat(dst); err == nil && !ours(dst, hiveDir) {
			out.Kept = append(out.Kept, s.Name)
			continue
		}
		if err := copyIn(filepath.Dir(s.Path), dst, hiveDir); err != nil {
			return out, fmt.Errorf("install skill %s: %w", s.Name, err)
		}
		out.Installed = append(out.Installed, s.Name)
	}
	removed, err := removeOurs(dir, hiveDir, func(name string) bool { return !want[name] })
	out.Removed = removed
	return out, err
}

// Remove deletes from dir the skills Install copied there from this hive
// (from any hive when hiveDir is empty), and nothing else.
func Remove(dir, hiveDir string) (Installed, error) {
	removed, err := removeOurs(dir, hiveDir, func(string) bool { return true })
	return Installed{Dir: dir, Installed: []string{}, Removed: removed, Kept: []string{}}, err
}

// removeOurs removes the folders of dir installed from hiveDir whose
// name drop accepts.
func removeOurs(dir, hiveDir string, drop func(string) bool) ([]string, error) {
	removed := []string{}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return removed, nil
	}
	if err != nil {
		return removed, err
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if !e.IsDir() || !drop(e.Name()) || !ours(path, hiveDir) {
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			return removed, err
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}

// ours reports whether the skill folder at path was installed from
// hiveDir (by memminer at all, when hiveDir is empty).
func ours(path, hiveDir string) bool {
	b, err := os.ReadFile(filepath.Join(path, Marker))
	return err == nil && (hiveDir == "" || strings.TrimSpace(string(b)) == hiveDir)
}

// copyIn copies the skill folder src to dst through a sibling temporary
// folder, so the client never sees half a skill.
func copyIn(src, dst, hiveDir string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".memminer-skill-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, "skill")
	// The folder is in the shared hive: read through a root of it, so a
	// file another user swaps for a link to the person's own files (an
	// SSH key) is not copied into the client's skills.
	root, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := os.CopyFS(staged, root.FS()); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(staged, Marker), []byte(hiveDir+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return os.Rename(staged, dst)
}
