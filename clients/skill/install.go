package skill

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Marker is the file a skill folder installed into a client holds: the
// hive it came from on its first line, then "skill NAME", the skill it is
// a copy of, and "sha256 HEX", the hash of what was copied (contentHash).
// Install replaces and Remove deletes only folders whose marker names the
// hive and the folder's own name, so a skill of the user's own, or a copy
// of an installed skill made to fork it (the marker copied along), is
// never touched.
const Marker = ".memminer-skill"

// marker is a Marker file read.
type marker struct {
	hive, skill, hash string
}

// readMarker reads the marker of the skill folder at path; ok is false
// without one. A marker written before the skill and hash were recorded
// holds the hive alone.
func readMarker(path string) (m marker, ok bool) {
	b, err := os.ReadFile(filepath.Join(path, Marker))
	if err != nil {
		return m, false
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	m.hive = strings.TrimSpace(lines[0])
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(l), " ")
		switch k {
		case "skill":
			m.skill = v
		case "sha256":
			m.hash = v
		}
	}
	return m, true
}

func (m marker) String() string {
	return m.hive + "\nskill " + m.skill + "\nsha256 " + m.hash + "\n"
}

// Installed is what Install or Remove did in a client's skills folder.
type Installed struct {
	// Dir is the client's skills folder.
	Dir string `json:"dir"`
	// Installed are the published skills copied in (new, or changed in
	// the hive since they were installed), Removed those taken out
	// (deprecated, or everything on Remove).
	Installed []string `json:"installed"`
	Removed   []string `json:"removed"`
	// Kept are published skills not installed because the client holds a
	// skill of that name that memminer did not install.
	Kept []string `json:"kept"`
	// Edited are installed copies edited in the client that memminer
	// would have replaced (the hive's skill changed) or removed: left as
	// they are and made the user's own (their marker removed), so from
	// then on they are Kept.
	Edited []string `json:"edited"`
}

// OrNil is in, or nil when nothing was installed, removed, kept or
// edited.
func (in Installed) OrNil() *Installed {
	if len(in.Installed)+len(in.Removed)+len(in.Kept)+len(in.Edited) == 0 {
		return nil
	}
	return &in
}

// Install brings the client's skills folder dir in step with the hive's
// published skills: each new one, or changed in the hive since it was
// installed, is copied in whole (SKILL.md and the files beside it; a
// link in a skill is refused), and the copies of skills no longer
// published are removed. A copy installed before and left as installed
// is replaced or removed; one the user edited is left as it is: while
// the hive's skill is unchanged it stays memminer's, and once it would
// be replaced or removed it becomes the user's own (Edited).
func Install(dir, hiveDir string) (Installed, error) {
	out := Installed{Dir: dir, Installed: []string{}, Removed: []string{}, Kept: []string{}, Edited: []string{}}
	published, err := PublishedSkills(hiveDir)
	if err != nil {
		return out, err
	}
	want := map[string]bool{}
	for _, s := range published {
		want[s.Name] = true
		dst := filepath.Join(dir, s.Name)
		if _, err := os.Lstat(dst); err == nil {
			if !ours(dst, hiveDir) {
				out.Kept = append(out.Kept, s.Name)
				continue
			}
			m, _ := readMarker(dst)
			src, err := hiveHash(hiveDir, s.Name)
			if err != nil {
				return out, fmt.Errorf("install skill %s: %w", s.Name, err)
			}
			if m.hash == src {
				continue // unchanged in the hive: the copy is left as it is
			}
			if edited(dst, m) {
				if err := disown(dst); err != nil {
					return out, err
				}
				out.Edited = append(out.Edited, s.Name)
				continue
			}
		}
		if err := copyIn(dst, hiveDir, s.Name); err != nil {
			return out, fmt.Errorf("install skill %s: %w", s.Name, err)
		}
		out.Installed = append(out.Installed, s.Name)
	}
	err = removeOurs(&out, hiveDir, func(name string) bool { return !want[name] })
	return out, err
}

// Remove deletes from dir the skills Install copied there from this hive
// (from any hive when hiveDir is empty), and nothing else; a copy the
// user edited is left and made theirs (Edited).
func Remove(dir, hiveDir string) (Installed, error) {
	out := Installed{Dir: dir, Installed: []string{}, Removed: []string{}, Kept: []string{}, Edited: []string{}}
	err := removeOurs(&out, hiveDir, func(string) bool { return true })
	return out, err
}

// removeOurs removes the folders of out.Dir installed from hiveDir whose
// name drop accepts, into out.Removed; those the user edited are made
// theirs, into out.Edited.
func removeOurs(out *Installed, hiveDir string, drop func(string) bool) error {
	entries, err := os.ReadDir(out.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		path := filepath.Join(out.Dir, e.Name())
		if !e.IsDir() || !drop(e.Name()) || !ours(path, hiveDir) {
			continue
		}
		if m, _ := readMarker(path); edited(path, m) {
			if err := disown(path); err != nil {
				return err
			}
			out.Edited = append(out.Edited, e.Name())
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			return err
		}
		out.Removed = append(out.Removed, e.Name())
	}
	return nil
}

// edited reports whether the installed copy at path, marked m, differs
// from what was copied in. A marker without a hash (an older memminer,
// which replaced every copy at each sync) cannot tell: not edited. A copy
// that cannot be read counts as edited, so it is never destroyed.
func edited(path string, m marker) bool {
	if m.hash == "" {
		return false
	}
	h, err := folderHash(path)
	return err != nil || h != m.hash
}

// disown makes the installed copy at path the user's: its marker goes.
func disown(path string) error {
	if err := os.Remove(filepath.Join(path, Marker)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ours reports whether the skill folder at path was installed from
// hiveDir (by memminer at all, when hiveDir is empty): its marker names
// the hive and the folder's own skill. A marker written before the skill
// was recorded counts only in a folder named as a skill of its hive, so a
// fork copied from an installed skill is the user's.
func ours(path, hiveDir string) bool {
	m, ok := readMarker(path)
	if !ok || hiveDir != "" && m.hive != hiveDir {
		return false
	}
	name := filepath.Base(path)
	if m.skill != "" {
		return m.skill == name
	}
	if m.hive == "" || CheckName(name) != nil {
		return false
	}
	for _, state := range States {
		if _, err := os.Lstat(folder(m.hive, state, name)); err == nil {
			return true
		}
	}
	return false
}

// contentHash is the hash of the skill folder open as root, the Marker
// aside: every path, in order, with its kind and a regular file's
// content. Links are hashed by their place, never followed.
func contentHash(root *os.Root) (string, error) {
	h := sha256.New()
	fsys := root.FS()
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == Marker {
			return nil
		}
		fmt.Fprintf(h, "%q %v\n", p, d.Type())
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := root.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		n, err := io.Copy(h, f)
		fmt.Fprintf(h, "\n%d\n", n)
		return err
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// folderHash is contentHash of the folder at path.
func folderHash(path string) (string, error) {
	root, err := os.OpenRoot(path)
	if err != nil {
		return "", err
	}
	defer root.Close()
	return contentHash(root)
}

// hiveHash is contentHash of the published skill name's folder in the
// hive, reached as copyIn reaches it (publishedRoot).
func hiveHash(hiveDir, name string) (string, error) {
	root, err := publishedRoot(hiveDir, name)
	if err != nil {
		return "", err
	}
	defer root.Close()
	return contentHash(root)
}

// publishedRoot opens the published skill name's folder as a root, from
// a root of the hive: the hive is shared, and another user of it could
// swap the folder (or skills/published) for a link to a folder of the
// person's own (~/.ssh) after the skill was listed; reached from the
// hive's root, a link is followed only when it stays in the hive.
func publishedRoot(hiveDir, name string) (*os.Root, error) {
	var root *os.Root
	err := inHive(hiveDir, func(hive *os.Root) error {
		var err error
		root, err = hive.OpenRoot(rel(Published, name))
		return err
	})
	return root, err
}

// copyIn copies the hive's published skill name to dst through a
// sibling temporary folder, so the client never sees half a skill, and
// marks it with the hive, the name and the hash of what was copied.
func copyIn(dst, hiveDir, name string) error {
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
	// SSH key) is not copied into the client's skills, and the root is
	// reached from the hive's (publishedRoot), so the folder itself
	// cannot be swapped for one either.
	root, err := publishedRoot(hiveDir, name)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := os.CopyFS(staged, root.FS()); err != nil {
		return err
	}
	// The hash is of the copy, which no other user can change under us.
	hash, err := folderHash(staged)
	if err != nil {
		return err
	}
	m := marker{hive: hiveDir, skill: name, hash: hash}
	if err := os.WriteFile(filepath.Join(staged, Marker), []byte(m.String()), 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return os.Rename(staged, dst)
}
