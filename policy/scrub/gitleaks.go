package scrub

// A second detection pass with gitleaks' default rule set (over 200
// provider formats). Only its configuration is used: the rules, their
// keywords, secret groups, entropy floors and allowlists. The matching is
// ours, so that it joins the Scrubber's single keyword pass: clean text
// still costs one scan of its bytes, and a gitleaks rule's regexp only
// runs in a small window around one of its keywords. gitleaks' detect
// package is not linked; it would bring archive and git readers and a
// second keyword automaton into the daemon for nothing we use.

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
)

// gitleaksDisabled lists gitleaks rules we leave out, each for a reason.
var gitleaksDisabled = map[string]string{
	// Our key=value rule covers it with fewer false positives, and its
	// 1,500 stop words make an automaton of ~9 MiB.
	"generic-api-key": "covered by our generic rule",
	// Covered by our own rules; their keywords ("ey", "s.") occur in most
	// text and would make clean text run their regexps.
	"jwt":                 "covered by our jwt rule",
	"vault-service-token": "covered by our vault rule",
	"private-key":         "covered by our PEM rule",
}

const (
	glBack = 128 // bytes before a keyword a gitleaks window starts
	glFwd  = 512 // bytes after it the window ends
	// gitleaksMaxWindows bounds the windows one pass hands to gitleaks'
	// rules: some are slow in RE2, and output crowded with keywords must
	// not make scrubbing one call slow. Our own rules still see all text.
	gitleaksMaxWindows = 256
)

// glRule is one gitleaks rule as the scrubber uses it.
type glRule struct {
	id     string
	marker string
	// re compiles the rule's regexp on its first use: most rules never
	// see their keyword in a daemon's life, and compiled they hold about
	// 2 MB of an idle daemon's heap.
	re          func() *regexp.Regexp
	secretGroup int
	entropy     float64
	allow       []*config.Allowlist
	// lit, when set, is the case-sensitive literal every match begins
	// with, and each of the rule's keywords is a prefix of it ignoring
	// case: a keyword found in another case ("sk" in "task" for "SK…")
	// cannot begin a match, and its window is not searched.
	lit string
}

// gitleaksRules is the loaded rule set, shared by every Scrubber.
type gitleaksRules struct {
	rules    []glRule
	keywords []string // lowercase, sorted
	kwRules  [][]int  // keyword index → rule indexes
	global   []*config.Allowlist
}

// glWindow is text around a keyword of gitleaks rule rule.
type glWindow struct {
	scrubWindow
	rule int
}

// loadGitleaks parses gitleaks' default config once, with a private viper
// instance: gitleaks' own loader writes into the global one.
var loadGitleaks = sync.OnceValues(func() (*gitleaksRules, error) {
	vc, err := gitleaksConfig()
	if err != nil {
		return nil, err
	}
	// Drop disabled rules before Translate compiles them.
	kept := vc.Rules[:0]
	for _, r := range vc.Rules {
		if _, off := gitleaksDisabled[r.ID]; !off {
			r.Regex = trimLeadingContext(r.Regex)
			kept = append(kept, r)
		}
	}
	vc.Rules = kept
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("gitleaks config: %w", err)
	}
	return newGitleaksRules(cfg), nil
})

// gitleaksConfig parses gitleaks' default config with a private viper.
func gitleaksConfig() (*config.ViperConfig, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("gitleaks config: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("gitleaks config: %w", err)
	}
	return &vc, nil
}

// Over a hundred gitleaks rules start by taking up to 50 name characters
// before their keyword, only so that the match shows the whole variable
// name. Go's regexp pays for that at every position of the text (a lazy
// counted repeat in front of a case-folded alternation), and it is most of
// what gitleaks' rules cost us. The secret is a capture group after the
// keyword, so the rule finds the same secrets without the prefix;
// TestGitleaksTrimmedRulesFindTheSame checks that on every trimmed rule.
const (
	contextPrefix      = `(?i)[\w.-]{0,50}?`
	contextPrefixMixed = `[\w.-]{0,50}?(?i:[\w.-]{0,50}?`
)

func trimLeadingContext(re string) string {
	if rest, ok := strings.CutPrefix(re, contextPrefix); ok {
		return "(?i)" + rest
	}
	if rest, ok := strings.CutPrefix(re, contextPrefixMixed); ok {
		return "(?i:" + rest
	}
	return re
}

// newGitleaksRules keeps the rules that can match tool output: a rule
// without keywords would have to run on all text, one with a path filter
// never matches text without a file name, and a composite rule needs
// gitleaks' multi-rule logic.
func newGitleaksRules(cfg config.Config) *gitleaksRules {
	g := &gitleaksRules{global: cfg.Allowlists}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range cfg.Rules {
			if !yield(id) {
				return
			}
		}
	})
	kwSet := map[string]bool{}
	for _, id := range ids {
		r := cfg.Rules[id]
		if len(r.Keywords) == 0 || r.Regex == nil || r.Path != nil || len(r.RequiredRules) > 0 || r.SkipReport {
			continue
		}
		g.rules = append(g.rules, glRule{
			id:          id,
			marker:      markerPrefix + "gitleaks:" + markerName(id) + "]",
			re:          sync.OnceValue(compileLater(r.Regex.String())),
			secretGroup: r.SecretGroup,
			entropy:     r.Entropy,
			allow:       r.Allowlists,
			lit:         keywordLiteral(r.Regex, r.Keywords),
		})
		for _, k := range r.Keywords {
			kwSet[strings.ToLower(k)] = true
		}
	}
	for k := range kwSet {
		g.keywords = append(g.keywords, k)
	}
	slices.Sort(g.keywords)
	g.kwRules = make([][]int, len(g.keywords))
	for gi, gr := range g.rules {
		for _, k := range cfg.Rules[gr.id].Keywords {
			ki, _ := slices.BinarySearch(g.keywords, strings.ToLower(k))
			if !slices.Contains(g.kwRules[ki], gi) {
				g.kwRules[ki] = append(g.kwRules[ki], gi)
			}
		}
	}
	return g
}

// compileLater returns what compiles src, a regexp that already compiled
// once (in gitleaks' Translate).
func compileLater(src string) func() *regexp.Regexp {
	return func() *regexp.Regexp { return regexp.MustCompile(src) }
}

// keywordLiteral is re's literal prefix if every keyword is a prefix of it
// ignoring case, else "".
func keywordLiteral(re *regexp.Regexp, keywords []string) string {
	lit, _ := re.LiteralPrefix()
	if lit == "" {
		return ""
	}
	for _, k := range keywords {
		if len(k) > len(lit) || !strings.EqualFold(lit[:len(k)], k) {
			return ""
		}
	}
	return lit
}

// A kwRules entry ri < 0 of a Scrubber stands for gitleaks rule -ri-1.
func glRuleRef(gi int) int { return -gi - 1 }

// gitleaksWindow is the text around a keyword at [start, end) that
// gitleaks rules look at: glBack bytes before it and glFwd after, both cut
// at whitespace so that no token is split (a split token would give the
// rules' \b a false word boundary).
func gitleaksWindow(text string, start, end int) scrubWindow {
	lo := max(0, start-glBack)
	if lo > 0 {
		if j := strings.LastIndexAny(text[lo:start], " \t\r\n"); j >= 0 {
			lo += j + 1
		} else {
			lo = start
		}
	}
	hi := min(len(text), end+glFwd)
	if hi < len(text) {
		if j := strings.LastIndexAny(text[end:hi], " \t\r\n"); j >= 0 {
			hi = end + j
		}
	}
	return scrubWindow{lo, hi}
}

// gitleaksSpans runs each window's rule on it and returns spans for the
// secrets they find; prio puts them after every own rule on a tie.
// Findings that overlap a span of an own rule are dropped: own rules win,
// so a secret is named by our kind where we know it.
func (s *Scrubber) gitleaksSpans(text string, ws []glWindow, spans []scrubSpan) []scrubSpan {
	if len(ws) == 0 {
		return spans
	}
	if len(ws) > gitleaksMaxWindows {
		// Keep the first windows of the text, whatever their rules.
		slices.SortFunc(ws, func(a, b glWindow) int {
			if a.lo != b.lo {
				return a.lo - b.lo
			}
			return a.rule - b.rule
		})
		ws = ws[:gitleaksMaxWindows]
	}
	prio := len(s.rules)
	own := make([]scrubWindow, len(spans))
	for i, sp := range spans {
		own[i] = scrubWindow{sp.start, sp.end}
	}
	slices.SortFunc(own, func(a, b scrubWindow) int { return a.lo - b.lo })
	// Prefix maxima of ends make the overlap test a binary search.
	for i := 1; i < len(own); i++ {
		own[i].hi = max(own[i].hi, own[i-1].hi)
	}
	overlaps := func(a, b int) bool {
		i, _ := slices.BinarySearchFunc(own, b, func(w scrubWindow, t int) int { return w.lo - t })
		return i > 0 && own[i-1].hi > a
	}
	for _, w := range ws {
		r := &s.gl.rules[w.rule]
		for _, loc := range r.re().FindAllStringSubmatchIndex(text[w.lo:w.hi], -1) {
			a, b, ok := s.gl.secret(r, text, w.lo, loc)
			if ok && !overlaps(a, b) {
				spans = append(spans, scrubSpan{a, b, prio, r.marker})
			}
		}
	}
	return spans
}

// secret applies gitleaks' rules for one regexp match at loc (relative to
// off): which group is the secret, its entropy floor, and the global and
// rule allowlists. It returns the secret's extent in text.
func (g *gitleaksRules) secret(r *glRule, text string, off int, loc []int) (int, int, bool) {
	ms, me := off+loc[0], off+loc[1]
	// gitleaks trims newlines a pattern may have taken at the ends.
	for ms < me && text[ms] == '\n' {
		ms++
	}
	for me > ms && text[me-1] == '\n' {
		me--
	}
	a, b := ms, me
	if len(loc) >= 4 {
		if r.secretGroup > 0 {
			if 2*r.secretGroup+1 >= len(loc) || loc[2*r.secretGroup] < 0 {
				return 0, 0, false
			}
			a, b = off+loc[2*r.secretGroup], off+loc[2*r.secretGroup+1]
		} else {
			// The first non-empty group, as gitleaks takes it.
			for i := 2; i+1 < len(loc); i += 2 {
				if loc[i] >= 0 && loc[i+1] > loc[i] {
					a, b = off+loc[i], off+loc[i+1]
					break
				}
			}
		}
	}
	if a >= b {
		return 0, 0, false
	}
	secret := text[a:b]
	if r.entropy != 0 && entropy(secret) <= r.entropy {
		return 0, 0, false
	}
	match := text[ms:me]
	line := lineAround(text, ms, me)
	if allowed(g.global, secret, match, line) || allowed(r.allow, secret, match, line) {
		return 0, 0, false
	}
	return a, b, true
}

// allowed reports whether one of the allowlists lets a finding pass, as
// gitleaks decides it for content without a commit or a path: with the
// AND condition every check the list has must hold, and a list that
// checks commits or paths never holds here.
func allowed(lists []*config.Allowlist, secret, match, line string) bool {
	for _, a := range lists {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = match
		case "line":
			target = line
		}
		re := a.RegexAllowed(target)
		sw, _ := a.ContainsStopWord(secret)
		if a.MatchCondition == config.AllowlistMatchAnd {
			if len(a.Commits) > 0 || len(a.Paths) > 0 {
				continue
			}
			if (len(a.Regexes) == 0 || re) && (len(a.StopWords) == 0 || sw) {
				return true
			}
			continue
		}
		if re || sw {
			return true
		}
	}
	return false
}

// lineAround is the line (or lines) of text holding [a, b).
func lineAround(text string, a, b int) string {
	lo := strings.LastIndexByte(text[:a], '\n') + 1
	hi := strings.IndexByte(text[b:], '\n')
	if hi < 0 {
		return text[lo:]
	}
	return text[lo : b+hi]
}
