package secrets

import (
	"fmt"
	"maps"
	"math"
	"regexp"
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
	rules     []*rule // by id, so findings come in one order
	prefilter *ahocorasick.Trie
}

// rule is one of gitleaks' rules, its regexp and allowlists compiled the
// first time a text holds one of its keywords: compiling all of them
// costs some 30 ms, and a note seldom holds the keywords of more than a
// few.
type rule struct {
	id          string
	keywords    []string // lower case
	secretGroup int
	entropy     float64
	compiled    func() compiledRule
}

type compiledRule struct {
	regex      *regexp.Regexp
	allowlists []*config.Allowlist
}

// rawFinding is a rule's match: the kind, the secret and the line it
// starts on in the text (for the generic filter).
type rawFinding struct {
	kind, secret string
	line         int
}

// gitleaksAllow on a line lets its match through, as gitleaks does.
const gitleaksAllow = "gitleaks:allow"

// newEngine reads gitleaks' default rules and extra.toml's (which
// replace a default rule of the same id), as gitleaks' configuration
// does (config.ViperConfig.Translate), but leaves each rule's regexps to
// be compiled when it is first needed.
func newEngine() (*engine, error) {
	// gitleaks logs to standard error (a version warning, a rule without
	// keywords): memminer's output is its own.
	logging.Logger = zerolog.Nop()
	byID := map[string]*rule{}
	e := &engine{}
	for _, src := range []string{config.DefaultConfig, extraRules} {
		v := viper.New()
		v.SetConfigType("toml")
		if err := v.ReadConfig(strings.NewReader(src)); err != nil {
			return nil, err
		}
		var vc config.ViperConfig
		if err := v.Unmarshal(&vc); err != nil {
			return nil, err
		}
		for _, vr := range vc.Rules {
			// A rule on paths alone, or on paths too, never matches a
			// text without one; SkipReport rules only serve others.
			if vr.Regex == "" || vr.Path != "" || vr.SkipReport {
				delete(byID, vr.ID)
				continue
			}
			if len(vr.Required) > 0 {
				return nil, fmt.Errorf("rule %s: rules that require others are not supported", vr.ID)
			}
			r := &rule{id: vr.ID, secretGroup: vr.SecretGroup, entropy: vr.Entropy}
			for _, k := range vr.Keywords {
				r.keywords = append(r.keywords, strings.ToLower(k))
			}
			type raw = struct {
				cond, target, desc             string
				regexes, paths, commits, stops []string
			}
			var lists []raw
			if vr.AllowList != nil {
				a := vr.AllowList
				lists = append(lists, raw{a.Condition, a.RegexTarget, a.Description, a.Regexes, a.Paths, a.Commits, a.StopWords})
			}
			for _, a := range vr.Allowlists {
				lists = append(lists, raw{a.Condition, a.RegexTarget, a.Description, a.Regexes, a.Paths, a.Commits, a.StopWords})
			}
			regex, id := vr.Regex, vr.ID
			r.compiled = sync.OnceValue(func() compiledRule {
				c := compiledRule{regex: regexp.MustCompile(regex)}
				for _, a := range lists {
					al, err := newAllowlist(a.cond, a.target, a.desc, a.regexes, a.paths, a.commits, a.stops)
					if err != nil {
						panic(fmt.Sprintf("secrets: rule %s: %v", id, err))
					}
					c.allowlists = append(c.allowlists, al)
				}
				return c
			})
			byID[vr.ID] = r
		}
		globals := vc.Allowlists
		//lint:ignore SA1019 gitleaks' own loader still reads the single [allowlist] form, and so must a loader of its files.
		if old := vc.AllowList; old != nil {
			globals = append(globals, old)
		}
		for _, a := range globals {
			if len(a.TargetRules) > 0 {
				return nil, fmt.Errorf("allowlists with targetRules are not supported")
			}
			al, err := newAllowlist(a.Condition, a.RegexTarget, a.Description, a.Regexes, a.Paths, a.Commits, a.StopWords)
			if err != nil {
				return nil, err
			}
			e.global = append(e.global, al)
		}
	}
	var keywords []string
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		r := byID[id]
		e.rules = append(e.rules, r)
		for _, k := range r.keywords {
			if !slices.Contains(keywords, k) {
				keywords = append(keywords, k)
			}
		}
	}
	e.prefilter = ahocorasick.NewTrieBuilder().AddStrings(keywords).Build()
	return e, nil
}

// newAllowlist is an allowlist as gitleaks' configuration makes one
// (parseAllowlist).
func newAllowlist(condition, target, desc string, regexes, paths, commits, stopWords []string) (*config.Allowlist, error) {
	a := &config.Allowlist{Description: desc, Commits: commits, StopWords: stopWords}
	switch strings.ToUpper(condition) {
	case "AND", "&&":
		a.MatchCondition = config.AllowlistMatchAnd
	case "", "OR", "||":
		a.MatchCondition = config.AllowlistMatchOr
	default:
		return nil, fmt.Errorf("unknown allowlist condition %q", condition)
	}
	switch target {
	case "", "secret":
	case "match", "line":
		a.RegexTarget = target
	default:
		return nil, fmt.Errorf("unknown allowlist regexTarget %q", target)
	}
	for _, r := range regexes {
		a.Regexes = append(a.Regexes, regexp.MustCompile(r))
	}
	for _, p := range paths {
		a.Paths = append(a.Paths, regexp.MustCompile(p))
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return a, nil
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
	for _, r := range e.rules {
		if len(r.keywords) > 0 && !slices.ContainsFunc(r.keywords, func(k string) bool { return present[k] }) {
			continue
		}
		found = append(found, e.findRule(text, r, newlines)...)
	}
	return dropGeneric(found)
}

func (e *engine) findRule(text string, r *rule, newlines func() []int) []rawFinding {
	c := r.compiled()
	var found []rawFinding
	for _, m := range c.regex.FindAllStringIndex(text, -1) {
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
		if groups := c.regex.FindStringSubmatch(match); len(groups) >= 2 {
			if r.secretGroup > 0 {
				if len(groups) <= r.secretGroup {
					continue
				}
				secret = groups[r.secretGroup]
			} else {
				for _, g := range groups[1:] {
					if g != "" {
						secret = g
						break
					}
				}
			}
		}
		if r.entropy != 0 && shannonEntropy(secret) <= r.entropy {
			continue
		}
		if allowed(e.global, secret, match, line) || allowed(c.allowlists, secret, match, line) {
			continue
		}
		found = append(found, rawFinding{kind: r.id, secret: secret, line: strings.Count(text[:start], "\n")})
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
