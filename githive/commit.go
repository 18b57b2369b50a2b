package githive

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// AuthorEmail is the e-mail address of a wing as a commit's author:
// Git wants one, and a wing has none.
func AuthorEmail(wing string) string { return wing + "@memminer.invalid" }

// Commit commits the file at path, as it is in the work tree, and nothing
// else: other changes staged or not stay as they are. The author is
// author (a wing; "memminer" when empty) and the message one line. A file
// with no change to commit is no error and makes no commit. Git refuses a
// commit of one file while a merge is in progress; that error is returned.
func (r *Repo) Commit(ctx context.Context, path, author, message string) (committed bool, err error) {
	rel, ok := r.Rel(path)
	if !ok {
		return false, fmt.Errorf("%s is outside the Git work tree %s", path, r.Top)
	}
	if author == "" {
		author = "memminer"
	}
	if message == "" {
		message = "memminer: update " + rel
	}
	st, err := git(ctx, r.Top, nil, "status", "--porcelain", "--", rel)
	if err != nil {
		return false, err
	}
	if strings.TrimSpace(st) == "" {
		return false, nil
	}
	if _, err := git(ctx, r.Top, nil, "add", "--", rel); err != nil {
		return false, err
	}
	if _, err := git(ctx, r.Top, nil, "commit", "--quiet", "--only", "-m", message,
		"--author", fmt.Sprintf("%s <%s>", author, AuthorEmail(author)), "--", rel); err != nil {
		return false, err
	}
	return true, nil
}

// Commit is one commit that touched a note.
type Commit struct {
	Hash    string    `json:"hash"`
	Author  string    `json:"author"`
	Email   string    `json:"email"`
	Date    time.Time `json:"date"`
	Subject string    `json:"subject"`
}

// History lists, newest first, the commits that changed lines first to
// last (1-based, inclusive) of the file at path as it is now, following
// them back through earlier versions (git log -L). A file Git does not
// track has no history and no error.
func (r *Repo) History(ctx context.Context, path string, first, last int) ([]Commit, error) {
	rel, ok := r.Rel(path)
	if !ok {
		return nil, fmt.Errorf("%s is outside the Git work tree %s", path, r.Top)
	}
	if _, err := git(ctx, r.Top, nil, "ls-files", "--error-unmatch", "--", rel); err != nil {
		return []Commit{}, nil
	}
	if last < first {
		last = first
	}
	const sep = "\x1e"
	out, err := git(ctx, r.Top, nil, "log", "--no-color", "--format="+sep+"%H%x1f%an%x1f%ae%x1f%aI%x1f%s",
		fmt.Sprintf("-L%d,%d:%s", first, last, rel))
	if err != nil {
		return nil, err
	}
	commits := []Commit{}
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, sep) {
			continue // the diff git log -L prints
		}
		f := strings.Split(strings.TrimPrefix(line, sep), "\x1f")
		if len(f) != 5 {
			continue
		}
		t, _ := time.Parse(time.RFC3339, f[3])
		commits = append(commits, Commit{Hash: f[0], Author: f[1], Email: f[2], Date: t, Subject: f[4]})
	}
	return commits, nil
}
