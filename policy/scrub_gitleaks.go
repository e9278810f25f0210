package policy

// A second detection pass with gitleaks' rule set (over 200 provider
// formats). Its keywords join the Scrubber's automaton, so clean text
// still costs one pass over its bytes; around a keyword, the rules that
// use it run on a small window first, and only when one matches does the
// gitleaks detector (entropy, allowlists, stopwords) run on that window.

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// gitleaksDisabled lists gitleaks rules that redact ordinary text in our
// benign corpus, or that our own rules already cover better.
var gitleaksDisabled = []string{
	"generic-api-key", // our key=value rule covers it, with fewer false positives
	// Covered by our own rules; their keywords ("ey", "s.") occur in most
	// text and would make clean text run their regexps.
	"jwt",
	"vault-service-token",
	"private-key",
}

const (
	glMarker = "gitleaks:"
	glBack   = 128
	glFwd    = 512
)

type gitleaksPass struct {
	det      *detect.Detector
	keywords []string         // lowercase, sorted
	kwRules  [][]int          // keyword index → rule indexes
	res      []*regexp.Regexp // rule index → its regexp, the cheap check
}

// A kwRules entry ri < 0 of a Scrubber stands for gitleaks rule -ri-1.
func glRuleRef(gi int) int { return -gi - 1 }

// gitleaksMaxWindows bounds the windows one scrub hands to gitleaks' rules.
const gitleaksMaxWindows = 256

// glWindow is text the detector may look at, and the rules whose keywords
// occur in it.
type glWindow struct {
	scrubWindow
	rules []int
}

// gitleaksDetector builds the detector once: the default config is parsed
// by a private viper instance, never the global one.
var gitleaksDetector = sync.OnceValues(func() (*gitleaksPass, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("gitleaks config: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("gitleaks config: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("gitleaks config: %w", err)
	}
	for _, id := range gitleaksDisabled {
		delete(cfg.Rules, id)
	}
	// Keep only the keywords of enabled rules. A rule without keywords
	// would have to run on all text, and one with a path filter never
	// matches text without a file name, so those are dropped too.
	cfg.Keywords = map[string]struct{}{}
	cfg.OrderedRules = cfg.OrderedRules[:0]
	for id, r := range cfg.Rules {
		if len(r.Keywords) == 0 || r.Regex == nil || r.Path != nil {
			delete(cfg.Rules, id)
			continue
		}
		cfg.OrderedRules = append(cfg.OrderedRules, id)
		for _, k := range r.Keywords {
			cfg.Keywords[strings.ToLower(k)] = struct{}{}
		}
	}
	sort.Strings(cfg.OrderedRules)
	p := &gitleaksPass{det: detect.NewDetector(cfg)}
	for k := range cfg.Keywords {
		p.keywords = append(p.keywords, k)
	}
	sort.Strings(p.keywords)
	p.kwRules = make([][]int, len(p.keywords))
	for _, id := range cfg.OrderedRules {
		r := cfg.Rules[id]
		gi := len(p.res)
		p.res = append(p.res, r.Regex)
		for _, k := range r.Keywords {
			ki, _ := slices.BinarySearch(p.keywords, strings.ToLower(k))
			if !slices.Contains(p.kwRules[ki], gi) {
				p.kwRules[ki] = append(p.kwRules[ki], gi)
			}
		}
	}
	return p, nil
})

// gitleaksWindow is the text around a keyword at [start, end) that the
// detector looks at: glBack bytes before it and glFwd after, both cut at
// whitespace so that no token is split (a split token would give the
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

// gitleaksSpans runs the detector on each window and returns spans for
// the secrets it finds; prio puts them after every own rule on a tie.
// Findings that overlap a span of an own rule are dropped: own rules win.
func (s *Scrubber) gitleaksSpans(text string, ws []glWindow, spans []scrubSpan) []scrubSpan {
	if len(ws) == 0 {
		return spans
	}
	// Some gitleaks rules are slow in RE2; on output crowded with candidate
	// windows, only the first gitleaksMaxWindows get its rules, so one call's
	// scrubbing stays bounded. Our own rules still cover all of the text.
	if len(ws) > gitleaksMaxWindows {
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
		// last own span starting before b
		i, _ := slices.BinarySearchFunc(own, b, func(w scrubWindow, t int) int { return w.lo - t })
		return i > 0 && own[i-1].hi > a
	}
	for _, w := range ws {
		sub := text[w.lo:w.hi]
		// Cheap check: the detector costs a lot per call, so it only runs
		// when one of the window's rules matches at all.
		if !slices.ContainsFunc(w.rules, func(gi int) bool { return s.gl.res[gi].MatchString(sub) }) {
			continue
		}
		for _, f := range s.gl.det.DetectString(sub) {
			if f.Secret == "" || f.Match == "" {
				continue
			}
			marker := markerPrefix + glMarker + markerName(f.RuleID) + "]"
			for from := 0; from < len(sub); {
				i := strings.Index(sub[from:], f.Match)
				if i < 0 {
					break
				}
				m := from + i
				if j := strings.Index(f.Match, f.Secret); j >= 0 {
					a := w.lo + m + j
					if !overlaps(a, a+len(f.Secret)) {
						spans = append(spans, scrubSpan{a, a + len(f.Secret), prio, marker})
					}
				}
				from = m + len(f.Match)
			}
		}
	}
	return spans
}

// addGitleaksWindow records that rule gi's keyword occurs at [start, end),
// merging its window with the previous one when they touch.
func addGitleaksWindow(ws []glWindow, text string, start, end, gi int) []glWindow {
	n := len(ws)
	if n == 0 || end > ws[n-1].hi {
		w := gitleaksWindow(text, start, end)
		if n == 0 || w.lo > ws[n-1].hi {
			return append(ws, glWindow{scrubWindow: w, rules: []int{gi}})
		}
		ws[n-1].hi = max(ws[n-1].hi, w.hi)
	}
	if !slices.Contains(ws[n-1].rules, gi) {
		ws[n-1].rules = append(ws[n-1].rules, gi)
	}
	return ws
}
