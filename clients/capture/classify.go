package capture

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Kinds of directive.
const (
	KindRemember = "remember" // "remember that …"
	KindForward  = "forward"  // "from now on …", "going forward …"
	KindRule     = "rule"     // "always …", "never …", "we use X, not Y", "the convention is …"
	KindDecision = "decision" // "we decided …", "we agreed …"
)

// Risks of a directive, as remember's risk spells them.
const (
	LowRisk  = "low"
	HighRisk = "high"
)

// Bounds of a sentence Classify considers: shorter is an aside, longer a
// pasted text.
const (
	minWords = 3
	maxWords = 60
)

// Directive is one durable directive the user stated.
type Directive struct {
	// Text is the directive in the user's words, without the lead-in that
	// asked for it to be remembered ("remember that").
	Text string `json:"text"`
	// Kind is one of the Kind* constants.
	Kind string `json:"kind"`
	// Risk is LowRisk or HighRisk: whether acting on it wrongly could
	// harm production, data, money or security (docs/capture.md).
	Risk string `json:"risk"`
}

// patterns are compiled on first use: a hook that captures nothing
// should not pay for them at start-up.
type patterns struct {
	filler, explicit, rememberTo, forward, alwaysNever, decision, rule, correction, notDurable, question, highRisk, code *regexp.Regexp
}

var pat = sync.OnceValue(func() patterns {
	return patterns{
		// Words a sentence may open with that do not change what it says.
		filler: regexp.MustCompile(`^(?:(?:hi|hey|hello|ok|okay|so|also|and|btw|by the way|oh|great|cool|thanks|thank you|please|one more thing|important|fyi)(?:\s*[,:;!.—–-]+\s*|\s+))+`),
		// "remember that X", "keep in mind: X", "don't forget that X".
		explicit: regexp.MustCompile(`^(?:remember|keep in mind|bear in mind|don'?t forget|do not forget|never forget|make a note|for the record|for future reference|note for the future|for your memory)(?:\s+that\b|\s*[:,—–-])\s*(.+)$`),
		// "remember to X" is durable only with a rule's words in it.
		rememberTo: regexp.MustCompile(`^(?:remember|don'?t forget|do not forget) to\s+(.*\b(?:always|never|every|each|whenever|before|after)\b.*)$`),
		forward:    regexp.MustCompile(`^(?:in (?:the )?future|in all future|for all future|next time|whenever)\b|\b(?:from now on|going forward|henceforth|from here on(?: out)?)\b`),
		// An imperative or a team's habit that opens with always or never.
		alwaysNever: regexp.MustCompile(`^(?:we\s+(?:should\s+|must\s+|need to\s+|have to\s+)?|you\s+(?:should|must|need to|have to)\s+|make sure (?:to|you|we)\s+|be sure to\s+)?(?:always|never|don'?t ever|do not ever)\s+(\S+)`),
		decision:    regexp.MustCompile(`^(?:we|the team|the group)(?:\s+have|'ve|\s+had)?\s+(?:decided|agreed|settled on|chose|have chosen|are going with|'re going with|will go with|are standardi[sz]ing on|standardi[sz]ed on)\b|^(?:our |the )?decision(?: is|:)\s|^(?:it'?s|it is) decided\b`),
		// A convention: "we use X (not Y)", "in this repo we …", "the rule is …",
		// "use X, not Y", "use X instead of Y", "don't use X; use Y".
		rule: regexp.MustCompile(`^(?:in (?:this|our) (?:repo|repository|project|codebase|team)|here|on this team),?\s+we\s+\S+|^we (?:use|prefer|don'?t use|do not use|never use|always use|write|name|keep|deploy|run|store|put|follow)\b.*\b(?:not|instead of|rather than|over|only|for|in (?:this|our)|across)\b|^(?:the|our) (?:convention|rule|policy|standard|house style|style)(?: here)? (?:is|says)\b|^(?:convention|rule|policy):\s|^(?:use|prefer|run|call|write|name)\s+\S.*(?:,\s*not\s+|\binstead of\b|\brather than\b|\bover\b)|^(?:don'?t|do not) use\s+\S.*[,;]\s*use\s+\S|\bin this (?:repo|repository|project|codebase)\b.*\b(?:must|should|always|never)\b|\b(?:must|should) (?:always|never)\b`),
		// "no, …", "actually, …": a correction, whose rest may state a rule.
		correction: regexp.MustCompile(`^(?:no|nope|wrong|not quite|not really|that'?s (?:wrong|not right|incorrect)|actually|correction)\b\s*[,.!:;—–-]*\s*`),
		// One-off scope or a hedge: not a durable directive.
		notDurable: regexp.MustCompile(`\b(?:for now|this time|just this once|right now|today|tonight|for this (?:pr|commit|task|change|branch|ticket|session)|temporarily|until tomorrow|never mind|nevermind|maybe|might|perhaps|probably|i think|i guess|not sure)\b`),
		question:   regexp.MustCompile(`^(?:(?:do|did|does|can|could|would|will|shall|have|has|is|are|was|were) (?:you|we|i|it|they|this|that|there|he|she)\b|(?:how|what|why|which|who|whom|whose) )`),
		highRisk:   regexp.MustCompile(`\b(?:prod|production|live|customers?|payments?|billing|invoices?|secrets?|passwords?|credentials?|tokens?|api keys?|private keys?|ssh keys?|certificates?|security|auth|authentication|permissions?|root|sudo|delete|deleting|deletes|drop|dropping|truncate|rm -rf|force[- ]push(?:ing)?|wipe|destroy|migrations?|migrate|deploy|deploys|deploying|deployment|release|releases|rollback|roll back|backups?|restore|firewall|dns|pii|gdpr|compliance|legal|main branch|master branch)\b`),
		code:       regexp.MustCompile("```|^\\s*[$#>]\\s|^\\s*(?:\\d+:\\d+|[{}\\[\\]])|\\t"),
	}
})

// Directives returns the durable directives in the user's messages, each
// once (the first time it is said), in order.
func Directives(messages []string) []Directive {
	var out []Directive
	seen := map[string]bool{}
	for _, m := range messages {
		for _, s := range Sentences(m) {
			d, ok := Classify(s)
			if !ok {
				continue
			}
			key := strings.ToLower(strings.TrimRight(d.Text, ".!"))
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, d)
		}
	}
	return out
}

// sentenceEnd ends a sentence: . ! or ? followed by a space. A dot inside
// a word or number (db-7.internal, v1.2) does not.
var sentenceEnd = regexp.MustCompile(`[.!?]+\s+`)

// Sentences cuts a message into the sentences Classify reads: one per
// line, and a line at each sentence end. Fenced code blocks and quoted
// lines are left out: they are pasted, not said.
func Sentences(message string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(message, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced || t == "" || strings.HasPrefix(t, ">") || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			continue
		}
		t = strings.TrimLeft(t, "-*• ")
		idx := sentenceEnd.FindAllStringIndex(t, -1)
		start := 0
		for _, ix := range idx {
			out = append(out, strings.TrimSpace(t[start:ix[1]]))
			start = ix[1]
		}
		if rest := strings.TrimSpace(t[start:]); rest != "" {
			out = append(out, rest)
		}
	}
	return out
}

// Classify reports whether one sentence the user said is a durable
// directive, and which: the rules of docs/capture.md. A question, an
// aside of under three words, a pasted text of over sixty, a line of
// code or output and anything scoped to now ("for now", "this time") is
// not.
func Classify(sentence string) (Directive, bool) {
	p := pat()
	s := strings.Join(strings.Fields(sentence), " ")
	if s == "" || !utf8.ValidString(s) || strings.HasSuffix(s, "?") || p.code.MatchString(sentence) {
		return Directive{}, false
	}
	lower := strings.ToLower(s)
	if len(lower) != len(s) {
		// Indexes into lower must be indexes into s.
		s = lower
	}
	cut := len(lower) - len(strings.TrimLeft(p.filler.ReplaceAllString(lower, ""), " "))
	s, lower = s[cut:], lower[cut:]
	if n := len(strings.Fields(s)); n < minWords || n > maxWords {
		return Directive{}, false
	}
	if p.question.MatchString(lower) || p.notDurable.MatchString(lower) {
		return Directive{}, false
	}
	if m := p.explicit.FindStringSubmatchIndex(lower); m != nil {
		return directive(s[m[2]:m[3]], KindRemember)
	}
	if m := p.rememberTo.FindStringSubmatchIndex(lower); m != nil {
		return directive(s[m[2]:m[3]], KindRemember)
	}
	if p.forward.MatchString(lower) {
		return directive(s, KindForward)
	}
	if p.decision.MatchString(lower) {
		return directive(s, KindDecision)
	}
	if m := p.correction.FindStringIndex(lower); m != nil && m[1] < len(lower) {
		// The correction's rest must state a rule on its own.
		if d, ok := Classify(s[m[1]:]); ok {
			return d, true
		}
		return Directive{}, false
	}
	if m := p.alwaysNever.FindStringSubmatch(lower); m != nil && !notImperative[strings.Trim(m[1], ".,;:!")] {
		return directive(s, KindRule)
	}
	if p.rule.MatchString(lower) {
		return directive(s, KindRule)
	}
	return Directive{}, false
}

// notImperative are the words after "always" or "never" that make a
// remark rather than a rule: "never seen that", "always happens",
// "always something with this CI" (no verb: an exclamation).
var notImperative = map[string]bool{
	"something": true, "anything": true, "nothing": true, "the": true, "a": true, "an": true, "so": true,
	"like": true, "late": true, "same": true, "this": true, "that": true,
	"seen": true, "heard": true, "been": true, "thought": true, "knew": true, "had": true, "happens": true,
	"happened": true, "works": true, "worked": true, "fails": true, "failed": true, "was": true, "is": true,
	"mind": true, "again": true, "got": true, "gets": true, "liked": true, "did": true, "does": true,
}

// directive is text, trimmed and capitalised, as a Directive of kind,
// with its risk.
func directive(text, kind string) (Directive, bool) {
	text = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), ",;:—–-"))
	if len(strings.Fields(text)) < minWords {
		return Directive{}, false
	}
	r, size := utf8.DecodeRuneInString(text)
	text = string(unicode.ToUpper(r)) + text[size:]
	return Directive{Text: text, Kind: kind, Risk: Risk(text)}, true
}

// Risk is a directive's risk: HighRisk when it bears on production,
// data, money, security, releases or destructive commands, whose wrong
// application costs more than a person's look at it; LowRisk otherwise.
func Risk(text string) string {
	if pat().highRisk.MatchString(strings.ToLower(text)) {
		return HighRisk
	}
	return LowRisk
}
