package secrets

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// engine runs gitleaks' rules over a text the way gitleaks' detector
// (package detect, Detector.DetectString) runs them over a fragment with
// no file path, no commit and no decoding: the keyword prefilter, each
// rule's regexp and secret group, its entropy threshold, the global and
// the rule's allowlists (regexes against the secret, the match or the
// line, stop words, either or all of them), "gitleaks:allow" on the
// line, and a generic rule's finding dropped for a specific one's on the
// same line. Package detect itself is not imported: it brings gitleaks'
// sources (archives, git) and reports, whose package initialisation cost
// every memminer command about 5 M instructions at start-up (BENCHMARKS.md).
type engine struct {
	global    []*config.Allowlist
	rules     []config.Rule // by id, so findings come in one order
	prefilter *ahocorasick.Trie
}

// rawFinding is a rule's match: the kind, the secret and the line it
// starts on in the text (for the generic filter).
type rawFinding struct {
	kind, secret string
	line         int
}

// gitleaksAllow on a line lets its match through, as gitleaks does.
const gitleaksAllow = "gitleaks:allow"

// newEngine runs gitleaks' default rules extended by extra.toml's.
func newEngine() (*engine, error) {
	cfg, err := gitleaksConfig()
	if err != nil {
		return nil, err
	}
	e := &engine{global: cfg.Allowlists}
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range cfg.Rules {
			if !yield(id) {
				return
			}
		}
	}) {
		r := cfg.Rules[id]
		// A rule on paths alone, or on paths too, never matches a text
		// without one; SkipReport rules only serve others.
		if r.Regex == nil || r.Path != nil || r.SkipReport {
			continue
		}
		if len(r.RequiredRules) > 0 {
			return nil, fmt.Errorf("rule %s: rules that require others are not supported", id)
		}
		e.rules = append(e.rules, r)
	}
	keywords := make([]string, 0, len(cfg.Keywords))
	for k := range cfg.Keywords {
		keywords = append(keywords, strings.ToLower(k))
	}
	e.prefilter = ahocorasick.NewTrieBuilder().AddStrings(keywords).Build()
	return e, nil
}

// gitleaksConfig is gitleaks' default configuration extended by
// extra.toml's rules, loaded once: gitleaks counts the extensions it
// loads in a global, and loads the default no more once it has twice.
var gitleaksConfig = sync.OnceValues(func() (config.Config, error) { return loadConfig(extraRules) })

// loadConfig is gitleaks' default configuration extended by extra
// (gitleaks' format). It goes through viper's global instance, as
// gitleaks' own loading does; nothing else in memminer uses viper.
func loadConfig(extra string) (config.Config, error) {
	// gitleaks logs to standard error (a version warning, a rule without
	// keywords): memminer's output is its own.
	logging.Logger = zerolog.Nop()
	viper.SetConfigType("toml")
	if err := viper.ReadConfig(strings.NewReader(extra)); err != nil {
		return config.Config{}, err
	}
	var vc config.ViperConfig
	if err := viper.Unmarshal(&vc); err != nil {
		return config.Config{}, err
	}
	return vc.Translate()
}

// find returns the secrets of text, rule by rule.
func (e *engine) find(text string) []rawFinding {
	lower := strings.ToLower(text)
	present := map[string]bool{}
	for _, m := range e.prefilter.MatchString(lower) {
		present[m.MatchString()] = true
	}
	newlines := sync.OnceValue(func() []int {
		var at []int
		for i := range len(text) {
			if text[i] == '\n' {
				at = append(at, i)
			}
		}
		return at
	})
	var found []rawFinding
	for i := range e.rules {
		r := &e.rules[i]
		if len(r.Keywords) > 0 && !slices.ContainsFunc(r.Keywords, func(k string) bool { return present[strings.ToLower(k)] }) {
			continue
		}
		found = append(found, e.findRule(text, r, newlines)...)
	}
	return dropGeneric(found)
}

func (e *engine) findRule(text string, r *config.Rule, newlines func() []int) []rawFinding {
	var found []rawFinding
	for _, m := range r.Regex.FindAllStringIndex(text, -1) {
		match := strings.Trim(text[m[0]:m[1]], "\n")
		// As gitleaks places it: from the match's start, as long as what
		// is left of it.
		start, end := m[0], m[0]+len(match)
		from, to := lineAround(newlines(), text, start, end)
		line := text[from:to]
		if strings.Contains(line, gitleaksAllow) {
			continue
		}
		secret := match
		if groups := r.Regex.FindStringSubmatch(match); len(groups) >= 2 {
			if r.SecretGroup > 0 {
				if len(groups) <= r.SecretGroup {
					continue
				}
				secret = groups[r.SecretGroup]
			} else {
				for _, g := range groups[1:] {
					if g != "" {
						secret = g
						break
					}
				}
			}
		}
		if r.Entropy != 0 && shannonEntropy(secret) <= r.Entropy {
			continue
		}
		if allowed(e.global, secret, match, line) || allowed(r.Allowlists, secret, match, line) {
			continue
		}
		found = append(found, rawFinding{kind: r.RuleID, secret: secret, line: strings.Count(text[:start], "\n")})
	}
	return found
}

// lineAround is the line gitleaks' detector gives the match text[start:end]
// (its location function, ported as it is): from the newline before the
// line the match starts on (the text's start on the first line) to the
// newline that ends the line it ends on, when it is a line that ends with
// one; to the end of the match's first line otherwise.
func lineAround(newlines []int, text string, start, end int) (from, to int) {
	if len(newlines) == 0 {
		newlines = []int{len(text)}
	}
	prev, set := 0, false
	for _, nl := range newlines {
		if prev <= start && start < nl {
			set, from, to = true, prev, nl
		}
		if prev < end && end <= nl {
			to = nl
		}
		prev = nl
	}
	if !set {
		to = end
		for to < len(text) && text[to] != '\n' && text[to] != '\r' {
			to++
		}
	}
	return from, max(to, end)
}

// allowed reports whether one of lists lets the finding through, as
// gitleaks' checkFindingAllowed decides it for a text with no path or
// commit.
func allowed(lists []*config.Allowlist, secret, match, line string) bool {
	for _, a := range lists {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = match
		case "line":
			target = line
		}
		regex := a.RegexAllowed(target)
		stop, _ := a.ContainsStopWord(secret)
		if a.MatchCondition != config.AllowlistMatchAnd {
			if regex || stop {
				return true
			}
			continue
		}
		// Every condition the list sets must hold; a text has no path or
		// commit, so a list that sets either never holds.
		if len(a.Commits) > 0 || len(a.Paths) > 0 ||
			len(a.Regexes) > 0 && !regex || len(a.StopWords) > 0 && !stop {
			continue
		}
		return true
	}
	return false
}

// dropGeneric drops a generic rule's finding when a specific rule found a
// secret holding it on the same line, as gitleaks does.
func dropGeneric(found []rawFinding) []rawFinding {
	var out []rawFinding
	for _, f := range found {
		if strings.Contains(strings.ToLower(f.kind), "generic") && slices.ContainsFunc(found, func(g rawFinding) bool {
			return g.line == f.line && g.kind != f.kind && strings.Contains(g.secret, f.secret) && !strings.Contains(strings.ToLower(g.kind), "generic")
		}) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// shannonEntropy is the Shannon entropy of data's runes, in bits, as
// gitleaks computes it (over len(data) bytes).
func shannonEntropy(data string) float64 {
	if data == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, c := range data {
		counts[c]++
	}
	entropy := 0.0
	inv := 1.0 / float64(len(data))
	for _, n := range counts {
		p := float64(n) * inv
		entropy -= p * math.Log2(p)
	}
	return entropy
}
