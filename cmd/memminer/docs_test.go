package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// repoRoot is the repository's root, seen from this package's directory.
var repoRoot = filepath.Join("..", "..")

// allCommands is root and every command below it.
func allCommands(root *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{root}
	for _, sub := range root.Commands() {
		out = append(out, allCommands(sub)...)
	}
	return out
}

var (
	// docsRef is a docs page named in help text or Go source, optionally
	// followed by the section it means: docs/mining.md ("Agent directories").
	docsRef = regexp.MustCompile(`\bdocs/([a-z0-9-]+\.md)(?:,? \(?"([^"]+)")?`)
	// mdLink is an inline markdown link; its target has no spaces.
	mdLink     = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	codeFence  = regexp.MustCompile("(?ms)^ {0,3}(```|~~~).*?^ {0,3}```[ \t]*$")
	codeSpan   = regexp.MustCompile("``[^`]*``|`[^`]*`")
	atxHeading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
)

// markdownFiles are the repository's markdown files, outside hidden
// directories and test data.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// anchors are the #fragments GitHub gives the headings of a markdown
// file: lower case, punctuation dropped, spaces as hyphens, a repeated
// one numbered.
func anchors(markdown string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range atxHeading.FindAllStringSubmatch(codeFence.ReplaceAllString(markdown, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(strings.ReplaceAll(m[1], "`", "")) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+string(rune('0'+n))] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// headings are the texts of a markdown file's headings.
func headings(markdown string) []string {
	var out []string
	for _, m := range atxHeading.FindAllStringSubmatch(codeFence.ReplaceAllString(markdown, ""), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestDocsLinks: every relative link in the repository's markdown names
// a file or directory that exists, and its #anchor a heading there.
func TestDocsLinks(t *testing.T) {
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := codeSpan.ReplaceAllString(codeFence.ReplaceAllString(string(data), ""), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			resolved := file
			if path != "" {
				resolved = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s: link %s: %v", file, target, err)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			page, err := os.ReadFile(resolved)
			if err != nil {
				t.Errorf("%s: link %s: %v", file, target, err)
				continue
			}
			if !anchors(string(page))[anchor] {
				t.Errorf("%s: link %s: %s has no heading with anchor #%s", file, target, resolved, anchor)
			}
		}
	}
}

// TestHelpNamesDocs: every docs page the help text, the messages and the
// code comments name exists, with the section named after it, and the
// README names each docs page.
func TestHelpNamesDocs(t *testing.T) {
	var texts []string
	for _, cmd := range allCommands(newApp(nil, nil, nil).rootCmd()) {
		texts = append(texts, cmd.Short, cmd.Long, cmd.Example)
		cmd.Flags().VisitAll(func(f *pflag.Flag) { texts = append(texts, f.Usage) })
	}
	_ = filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			if data, err := os.ReadFile(p); err == nil {
				texts = append(texts, string(data))
			}
		}
		return nil
	})
	seen := map[string]bool{}
	for _, text := range texts {
		text = strings.Join(strings.Fields(strings.ReplaceAll(text, "//", "")), " ")
		for _, m := range docsRef.FindAllStringSubmatch(text, -1) {
			if seen[m[0]] {
				continue
			}
			seen[m[0]] = true
			data, err := os.ReadFile(filepath.Join(repoRoot, "docs", m[1]))
			if err != nil {
				t.Errorf("%q names docs/%s: %v", m[0], m[1], err)
				continue
			}
			if section := m[2]; section != "" && !containsFold(headings(string(data)), section) {
				t.Errorf("%q: docs/%s has no section %q", m[0], m[1], section)
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("no help text or source names a docs page")
	}

	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	for _, p := range pages {
		if name := "docs/" + filepath.Base(p); !strings.Contains(string(readme), "("+name+")") {
			t.Errorf("README.md does not link %s", name)
		}
	}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// TestHelpDefaults: a flag's help states its default once, and a flag
// whose help says what an unset value means shows no default of pflag's
// (run --syncthing-url once showed one its text contradicted).
func TestHelpDefaults(t *testing.T) {
	for _, cmd := range allCommands(newApp(nil, nil, nil).rootCmd()) {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			fs := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
			fs.AddFlag(f)
			usage := fs.FlagUsagesWrapped(0)
			n := strings.Count(usage, "default")
			if n > 1 || n == 1 && strings.Contains(f.Usage, "unset") {
				t.Errorf("%s --%s: %q", cmd.CommandPath(), f.Name, strings.TrimSpace(usage))
			}
		})
	}
}
