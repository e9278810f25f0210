package scrub

// Credential scrubbing: tool output passes through a Scrubber before an
// agent or a user sees it. Two sources of secrets are covered:
//
//   - known values (the API keys toolcage itself injected), matched in their
//     raw, base64, URL-escaped and hex forms by one Aho-Corasick automaton;
//   - well-known credential shapes (provider tokens, PEM keys, URL
//     passwords, key=value pairs), matched by RE2 rules that only run in a
//     window around one of their keywords.
//
// Keywords and known values share the automaton, so clean text costs a
// single pass over its bytes.

import (
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Rule describes one credential shape.
type Rule struct {
	Kind        string   // shown in the marker: "[REDACTED:Kind]"
	Pattern     string   // RE2 syntax
	SecretGroup int      // capture group holding the secret; 0 = whole match
	Keywords    []string // lowercase literals; the regexp runs only near one (case-insensitive). None = run on all text.
	MinEntropy  float64  // minimum Shannon entropy (bits per byte) of the secret
}

// Scrubber redacts secrets from text. It is safe for concurrent use.
type Scrubber struct {
	rules   []*scrubRule
	nkw     int      // rule keywords in ac and, last, the one that finds markers of earlier passes; escape triggers follow
	kwRules [][]int  // keyword id → rule indexes
	always  []int    // rules with no keywords
	kwList  []string // keyword literals, the automaton's first nkw ids
	ac      *acMatcher
	// The known values have an automaton of their own, so that a call's
	// scrubber (WithKnown) shares the big keyword automaton and builds
	// only this small one.
	known   []string // knownAC id → marker of the known value
	knownAC *acMatcher
	gl      *gitleaksRules // kwRules entries ri < 0 refer to its rules
	// ruleMarkers are the markers the rules write. Only a marker this
	// scrubber writes (one of these or of known) shields the text inside
	// it from later passes: "[REDACTED:" + a secret + "]" is a secret.
	ruleMarkers map[string]bool
	// unanchored makes built-in rules search their whole windows, as they
	// did before anchoring; tests compare the two.
	unanchored bool
}

// scrubRule is a compiled Rule plus the refinements built-in rules use.
type scrubRule struct {
	Rule
	re *regexp.Regexp
	// builtin rules' windows start back bytes before the keyword instead
	// of at the start of its line.
	builtin   bool
	back      int
	multiline bool                                          // the match may span lines (PEM blocks)
	valid     func(w string, loc []int, secret string) bool // rejects look-alikes
	// at, when set, replaces the regexp: it parses the text around a
	// keyword at [ks, ke) and returns submatch indexes like the regexp's.
	at func(text string, ks, ke int) []int
	// all, when set, replaces the regexp for formats with several secrets
	// per keyword (a Cookie header, a command line): it returns the
	// secrets it found in text.
	all func(text string, ks, ke int) []found
	// anchored, for built-in regexp rules, is re tried only at the window's
	// first back+1 positions. A built-in rule's match begins at most back
	// bytes before its keyword, so one anchored attempt per keyword finds
	// what an unanchored search of the rest of the line would, without
	// walking that rest.
	anchored *regexp.Regexp
}

const (
	markerPrefix   = "[REDACTED:"
	minKnownLen    = 6
	windowBack     = 256
	windowFwd      = 1024
	windowFwdMulti = 32 << 10
	windowFwdTight = 8 << 10
	maxPasses      = 3
)

// New returns a Scrubber with the built-in rules, the extra rules,
// and the known secret values (name → value). Values shorter than 6 bytes
// are ignored: they would redact ordinary text.
func New(known map[string]string, extra []Rule) (*Scrubber, error) {
	base, err := builtinScrubRules()
	if err != nil {
		return nil, err
	}
	// The person's rules come first: a rule's index is its rank when two
	// spans start together, and theirs name the kind they mean, where a
	// built-in context rule only says "credential".
	rules := make([]*scrubRule, 0, len(extra)+len(base))
	for i, r := range extra {
		cr, err := compileScrubRule(r)
		if err != nil {
			return nil, fmt.Errorf("scrub rule %d (%s): %w", i, r.Kind, err)
		}
		rules = append(rules, cr)
	}
	rules = append(rules, base...)
	gl, err := loadGitleaks()
	if err != nil {
		return nil, err
	}
	s := &Scrubber{rules: rules, gl: gl, ruleMarkers: map[string]bool{markerPrefix + "cookie]": true}}
	for _, r := range rules {
		s.ruleMarkers[markerPrefix+r.Kind+"]"] = true
	}
	for _, r := range gl.rules {
		s.ruleMarkers[r.marker] = true
	}
	kwID := map[string]int{}
	var kws []string
	keywordID := func(k string) int {
		id, ok := kwID[k]
		if !ok {
			id = len(kws)
			kwID[k] = id
			kws = append(kws, k)
			s.kwRules = append(s.kwRules, nil)
		}
		return id
	}
	for ri, r := range rules {
		if len(r.Keywords) == 0 {
			s.always = append(s.always, ri)
			continue
		}
		for _, k := range r.Keywords {
			id := keywordID(strings.ToLower(k))
			if !slices.Contains(s.kwRules[id], ri) {
				s.kwRules[id] = append(s.kwRules[id], ri)
			}
		}
	}
	for ki, k := range gl.keywords {
		id := keywordID(k)
		for _, gi := range gl.kwRules[ki] {
			s.kwRules[id] = append(s.kwRules[id], glRuleRef(gi))
		}
	}
	// One more keyword finds markers of earlier passes.
	kws = append(kws, strings.ToLower(markerPrefix))
	s.kwRules = append(s.kwRules, nil)
	s.nkw = len(kws)
	kws = append(kws, escapeTriggers...)
	return s.build(kws, known), nil
}

// WithKnown returns a copy of s that shares its rules but redacts the
// given known values instead of s's.
func (s *Scrubber) WithKnown(known map[string]string) *Scrubber {
	c := &Scrubber{rules: s.rules, nkw: s.nkw, kwRules: s.kwRules, always: s.always, gl: s.gl,
		kwList: s.kwList, ac: s.ac, ruleMarkers: s.ruleMarkers}
	return c.withKnown(known)
}

func (s *Scrubber) build(kws []string, known map[string]string) *Scrubber {
	s.kwList = kws
	s.ac = newACMatcher(kws)
	return s.withKnown(known)
}

// withKnown builds s's automaton of known values.
func (s *Scrubber) withKnown(known map[string]string) *Scrubber {
	var lits []string
	s.known, s.knownAC = nil, nil
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	slices.Sort(names)
	seen := map[string]bool{}
	for _, n := range names {
		marker := secretMarkerPrefix + markerName(n) + "]"
		for _, f := range knownForms(known[n]) {
			lf := strings.ToLower(f)
			if len(f) < minKnownLen || seen[lf] {
				continue
			}
			seen[lf] = true
			lits = append(lits, f)
			s.known = append(s.known, marker)
		}
	}
	if len(lits) > 0 {
		s.knownAC = newACMatcher(lits)
	}
	return s
}

// knownForms lists the encodings a secret value is recognised in.
func knownForms(v string) []string {
	if len(v) < minKnownLen {
		return nil
	}
	b := []byte(v)
	return []string{
		v,
		base64.StdEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
		url.QueryEscape(v),
		url.PathEscape(v),
		hex.EncodeToString(b), // upper case is matched by case folding
		jsonString(v, true),   // inside a JSON string, as Go writes it
		jsonString(v, false),  // ... and as most other encoders do
		reversed(v),           // rev
		reversedJSON(v),       // ... inside a JSON string
	}
}

// jsonString is v escaped for the inside of a JSON string.
func jsonString(v string, escapeHTML bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	enc.Encode(v)
	s := strings.TrimSuffix(b.String(), "\n")
	return s[1 : len(s)-1]
}

func markerName(n string) string {
	b := []byte(n)
	for i, c := range b {
		if !isMarkerByte(c) || c == ':' {
			b[i] = '_'
		}
	}
	return string(b)
}

func isMarkerByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == ':'
}

// Scrub returns text with every secret replaced by a marker. Only the
// secret part of a match is replaced; known values become
// "[REDACTED:secret:NAME]". Scrub is idempotent.
func (s *Scrubber) Scrub(text string) string {
	for range maxPasses {
		out, changed := s.scrubOnce(text)
		if !changed {
			return text
		}
		text = out
	}
	return text
}

// ScrubBytes is Scrub for byte slices. The input is not modified; when
// nothing is redacted it is returned as is.
func (s *Scrubber) ScrubBytes(b []byte) []byte {
	in := string(b)
	out := s.Scrub(in)
	if len(out) == len(in) && out == in {
		return b
	}
	return []byte(out)
}

type scrubSpan struct {
	start, end int
	prio       int // lower wins a tie on start
	marker     string
}

type scrubWindow struct{ lo, hi int }

// scrubOnce does one pass; changed reports whether anything was redacted.
func (s *Scrubber) scrubOnce(text string) (string, bool) {
	return redact(text, s.allSpans(text))
}

// allSpans is what one pass redacts in text: what the rules and the known
// values find in it as written, around its escapes decoded, and in what
// it joins or decodes to.
func (s *Scrubber) allSpans(text string) []scrubSpan {
	spans, escs := s.find(text, true)
	// Only the text around escapes is decoded and searched again: what
	// lies farther from every escape was found in the raw text already.
	win := escapeWindow
	if s.knownAC != nil {
		win = max(win, s.knownAC.maxLen) // a long known value with one escape in it
	}
	for i := 0; i < len(escs); {
		lo, hi := max(0, escs[i]-win), min(len(text), escs[i]+win)
		for i++; i < len(escs) && escs[i]-win <= hi; i++ {
			hi = min(len(text), escs[i]+win)
		}
		// Cut at blanks, so that no token is split (a split token looks
		// like one that ends there).
		if j := strings.LastIndexAny(text[max(0, lo-256):lo], " \t\n"); j >= 0 {
			lo = max(0, lo-256) + j + 1
		}
		if j := strings.IndexAny(text[hi:min(len(text), hi+256)], " \t\n"); j >= 0 {
			hi += j
		}
		u, ok := unescape(text[lo:hi])
		if !ok {
			continue
		}
		// gitleaks' rules see raw text only: their window budget is
		// for the whole text, not for each window around an escape.
		found, _ := s.find(u.text, false)
		for _, sp := range found {
			sp.start, sp.end = u.span(sp.start, sp.end)
			sp.start += lo
			sp.end += lo
			spans = append(spans, sp)
		}
	}
	// What only the joined or decoded text shows is added where the text
	// as written showed nothing: the raw finding is the better extent.
	for _, e := range s.encodedSpans(text) {
		if !slices.ContainsFunc(spans, func(sp scrubSpan) bool { return sp.start < e.end && e.start < sp.end }) {
			spans = append(spans, e)
		}
	}
	return spans
}

// redact replaces spans of text with their markers; overlapping spans
// become one. changed is false when there is no span.
func redact(text string, spans []scrubSpan) (string, bool) {
	if len(spans) == 0 {
		return text, false
	}
	spans = repeatSpans(text, spans)
	slices.SortFunc(spans, func(a, b scrubSpan) int {
		if a.start != b.start {
			return a.start - b.start
		}
		if a.prio != b.prio {
			return a.prio - b.prio
		}
		return b.end - a.end
	})
	var sb strings.Builder
	sb.Grow(len(text))
	last := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].start < cur.end; i++ {
			cur.end = max(cur.end, spans[i].end)
		}
		sb.WriteString(text[last:cur.start])
		sb.WriteString(cur.marker)
		last = cur.end
	}
	sb.WriteString(text[last:])
	return sb.String(), true
}

// escapeWindow is how far around an escape the decoded text is searched:
// a match involving the escape lies within it.
const escapeWindow = 1 << 10

// find returns the spans to redact in text and the offsets of escapes in
// it, in order; gitleaks says whether gitleaks' rules run.
func (s *Scrubber) find(text string, gitleaks bool) (spans []scrubSpan, escs []int) {
	var (
		markers []markerWindow
		wins    map[int][]scrubWindow
		glWins  []glWindow
	)
	if s.knownAC != nil {
		s.knownAC.scan(text, func(end int, id int32) {
			spans = append(spans, scrubSpan{end - s.knownAC.lens[id], end, -1, s.known[id]})
		})
	}
	s.ac.scan(text, func(end int, id int32) {
		start := end - s.ac.lens[id]
		if int(id) >= s.nkw-1 {
			if int(id) >= s.nkw {
				if escapeAt(text, start, end) {
					escs = append(escs, start)
				}
			} else if w, ok := s.markerAt(text, start); ok {
				markers = append(markers, w)
			}
			return
		}
		for _, ri := range s.kwRules[id] {
			var r *scrubRule
			if ri < 0 {
				if !gitleaks {
					continue
				}
				if lit := s.gl.rules[-ri-1].lit; lit != "" && text[start:end] != lit[:end-start] {
					continue
				}
			} else {
				r = s.rules[ri]
				if r.all != nil {
					for _, f := range r.all(text, start, end) {
						if _, marked := s.markerAt(text, f.a); f.a < f.b && !marked {
							spans = append(spans, scrubSpan{f.a, f.b, ri, markerPrefix + cmp.Or(f.kind, r.Kind) + "]"})
						}
					}
					continue
				}
				if r.at != nil {
					spans = r.findAt(text, start, end, ri, spans)
					continue
				}
				if r.anchored != nil && !s.unanchored {
					spans = r.findAnchored(text, start, end, ri, spans)
					continue
				}
			}
			if wins == nil {
				wins = map[int][]scrubWindow{}
			}
			ws := wins[ri]
			if n := len(ws); n > 0 && start < ws[n-1].hi && end <= ws[n-1].hi {
				continue // already covered
			}
			var w scrubWindow
			if r != nil {
				w = r.window(text, start, end)
			} else {
				w = gitleaksWindow(text, start, end)
			}
			if n := len(ws); n > 0 && w.lo <= ws[n-1].hi {
				ws[n-1].lo = min(ws[n-1].lo, w.lo)
				ws[n-1].hi = max(ws[n-1].hi, w.hi)
			} else {
				ws = append(ws, w)
			}
			wins[ri] = ws
		}
	})
	for _, ri := range s.always {
		spans = s.rules[ri].find(text, scrubWindow{0, len(text)}, ri, spans)
	}
	for ri, ws := range wins {
		if ri < 0 {
			for _, w := range ws {
				glWins = append(glWins, glWindow{w, -ri - 1})
			}
			continue
		}
		for _, w := range ws {
			spans = s.rules[ri].find(text, w, ri, spans)
		}
	}
	spans = s.gitleaksSpans(text, glWins, spans)
	if len(spans) == 0 {
		return nil, escs
	}
	// Spans lying inside a marker come from earlier passes; gitleaks spans
	// must not touch one at all. A known value inside a secret marker of a
	// name this scrubber does not know is a known value all the same.
	if len(markers) > 0 {
		spans = slices.DeleteFunc(spans, func(sp scrubSpan) bool {
			own := sp.prio < len(s.rules)
			for _, m := range markers {
				if m.otherSecret && sp.prio < 0 {
					continue
				}
				if m.lo <= sp.start && sp.end <= m.hi ||
					!own && sp.start < m.hi && m.lo < sp.end {
					return true
				}
			}
			return false
		})
	}
	return spans, escs
}

// markerWindow is a marker's extent in a text.
type markerWindow struct {
	scrubWindow
	// otherSecret marks a known value's marker of a name s does not
	// know: another call's scrubber wrote it, or a tool forged it.
	otherSecret bool
}

// secretMarkerPrefix starts the markers of known values.
const secretMarkerPrefix = markerPrefix + "secret:"

// markerAt reports the extent of a marker starting at i: one s writes, or
// a known value's marker of any name (another call's scrubber wrote it).
// Anything else in marker form ("[REDACTED:" + a secret + "]") is text
// like any.
func (s *Scrubber) markerAt(text string, i int) (markerWindow, bool) {
	if !strings.HasPrefix(text[i:], markerPrefix) {
		return markerWindow{}, false
	}
	for j := i + len(markerPrefix); j < len(text) && j < i+256; j++ {
		if text[j] == ']' {
			m := text[i : j+1]
			w := markerWindow{scrubWindow: scrubWindow{i, j + 1}}
			switch {
			case s.ruleMarkers[m] || slices.Contains(s.known, m):
			case strings.HasPrefix(m, secretMarkerPrefix) && len(m) > len(secretMarkerPrefix)+1:
				w.otherSecret = true
			default:
				return markerWindow{}, false
			}
			return w, true
		}
		if !isMarkerByte(text[j]) {
			break
		}
	}
	return markerWindow{}, false
}

// window is the text around a keyword at [start, end) that a rule's
// regexp looks at: the keyword's line, within bounds. Built-in rules know
// how far their match can begin before the keyword.
func (r *scrubRule) window(text string, start, end int) scrubWindow {
	var lo, hi int
	if r.builtin {
		lo = max(0, start-r.back)
		hi = min(len(text), max(end, start+windowFwdTight))
	} else {
		lo = max(0, start-windowBack)
		if j := strings.LastIndexByte(text[lo:start], '\n'); j >= 0 {
			lo += j + 1
		}
		hi = min(len(text), end+windowFwd)
	}
	if r.multiline {
		return scrubWindow{lo, min(len(text), end+windowFwdMulti)}
	}
	if j := strings.IndexByte(text[end:hi], '\n'); j >= 0 {
		hi = end + j
	}
	return scrubWindow{lo, hi}
}

func (r *scrubRule) find(text string, w scrubWindow, ri int, spans []scrubSpan) []scrubSpan {
	sub := text[w.lo:w.hi]
	for _, loc := range r.re.FindAllStringSubmatchIndex(sub, -1) {
		spans = r.accept(sub, loc, w.lo, ri, spans)
	}
	return spans
}

// findAnchored tries the rule once at the keyword at [ks, ke).
func (r *scrubRule) findAnchored(text string, ks, ke, ri int, spans []scrubSpan) []scrubSpan {
	w := r.window(text, ks, ke)
	sub := text[w.lo:w.hi]
	if loc := r.anchored.FindStringSubmatchIndex(sub); loc != nil {
		spans = r.accept(sub, loc, w.lo, ri, spans)
	}
	return spans
}

func (r *scrubRule) findAt(text string, ks, ke, ri int, spans []scrubSpan) []scrubSpan {
	if loc := r.at(text, ks, ke); loc != nil {
		spans = r.accept(text, loc, 0, ri, spans)
	}
	return spans
}

// accept adds the secret of a match in w at submatch indexes loc, unless
// it fails the rule's checks; off places w in the whole text.
func (r *scrubRule) accept(w string, loc []int, off, ri int, spans []scrubSpan) []scrubSpan {
	a, b := loc[2*r.SecretGroup], loc[2*r.SecretGroup+1]
	if a < 0 || a == b {
		return spans
	}
	secret := w[a:b]
	switch {
	case strings.HasPrefix(secret, markerPrefix),
		r.valid != nil && !r.valid(w, loc, secret),
		r.MinEntropy > 0 && entropy(secret) < r.MinEntropy,
		r.builtin && r.at == nil && examplePlaceholder(secret): // sk_abcdefghijklmnopqrstuvwxyz123
		return spans
	}
	return append(spans, scrubSpan{off + a, off + b, ri, markerPrefix + r.Kind + "]"})
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// CheckRule reports what is wrong with an extra rule, as New would.
func CheckRule(r Rule) error {
	_, err := compileScrubRule(r)
	return err
}

func compileScrubRule(r Rule) (*scrubRule, error) {
	if r.Kind == "" {
		return nil, fmt.Errorf("empty kind")
	}
	for i := 0; i < len(r.Kind); i++ {
		if !isMarkerByte(r.Kind[i]) || r.Kind[i] == ':' {
			return nil, fmt.Errorf("kind %q: use letters, digits, '_', '-' and '.' only", r.Kind)
		}
	}
	re, err := regexp.Compile(r.Pattern)
	if err != nil {
		return nil, err
	}
	if r.SecretGroup < 0 || r.SecretGroup > re.NumSubexp() {
		return nil, fmt.Errorf("secret group %d out of range (pattern has %d)", r.SecretGroup, re.NumSubexp())
	}
	for _, k := range r.Keywords {
		if k == "" {
			return nil, fmt.Errorf("empty keyword")
		}
	}
	return &scrubRule{Rule: r, re: re}, nil
}

var builtinScrubRules = sync.OnceValues(func() ([]*scrubRule, error) {
	out := make([]*scrubRule, 0, len(scrubBuiltins))
	for _, b := range scrubBuiltins {
		cr, err := compileScrubRule(b.rule)
		if err != nil {
			return nil, fmt.Errorf("built-in scrub rule %s: %w", b.rule.Kind, err)
		}
		cr.builtin, cr.back = true, max(1, b.back)
		cr.multiline, cr.valid, cr.at, cr.all = b.multiline, b.valid, b.at, b.all
		if cr.at == nil && cr.all == nil {
			// The same pattern, tried only at the starts a keyword hit
			// allows: up to back bytes before the keyword.
			anch, err := regexp.Compile(fmt.Sprintf(`^(?s:.){0,%d}?(?:%s)`, cr.back, b.rule.Pattern))
			if err != nil {
				return nil, fmt.Errorf("built-in scrub rule %s: %w", b.rule.Kind, err)
			}
			cr.anchored = anch
		}
		out = append(out, cr)
	}
	return out, nil
})
