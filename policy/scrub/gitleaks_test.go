package scrub

import (
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
)

// Formats only gitleaks' rules know: the secret becomes a gitleaks
// marker, the text around it stays, and Scrub stays idempotent.
func TestGitleaksOnlyFormats(t *testing.T) {
	s := newTestScrubber(t, nil)
	for _, tc := range []struct{ rule, secret, text string }{
		{"shippo-api-token", "shippo_live_3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f0a", "shipping label via %s\n"},
		{"flutterwave-secret-key", "FLWSECK_TEST-8c1f3a9e7b2d5f4a6c0e9b1d7f3a5c8e-X", "flutterwave: %s\nnext line"},
		{"prefect-api-token", "pnu_Zx8Kq2Lm4Np6Rs0Tv3Wy5Ab7Cd9Ef1Gh3Jk5", "prefect cloud login with %s\n"},
		{"heroku-api-key-v2", "HRKU-AA" + strings.Repeat("q7Zr2Lm9Xw4Kp1Vb8Nc3", 3)[:58], "export TOKEN=%s\n"},
	} {
		text := strings.ReplaceAll(tc.text, "%s", tc.secret)
		out := s.Scrub(text)
		if strings.Contains(out, tc.secret) {
			t.Errorf("%s: secret survives: %q", tc.rule, out)
			continue
		}
		want := strings.ReplaceAll(tc.text, "%s", "[REDACTED:gitleaks:"+tc.rule+"]")
		if tc.rule == "heroku-api-key-v2" {
			// Our generic TOKEN= rule sees it first and names it.
			if !strings.HasPrefix(out, "export TOKEN=[REDACTED:") {
				t.Errorf("%s: got %q", tc.rule, out)
			}
		} else if out != want {
			t.Errorf("%s: got %q, want %q", tc.rule, out, want)
		}
		if again := s.Scrub(out); again != out {
			t.Errorf("%s: not idempotent: %q → %q", tc.rule, out, again)
		}
	}
}

// gitleaks' own refinements hold: a rule's entropy floor and the global
// allowlist keep placeholders readable.
func TestGitleaksRefinements(t *testing.T) {
	s := newTestScrubber(t, nil)
	for _, tc := range []struct {
		name, text string
		redact     bool
	}{
		{"entropy floor: all zeros", "shippo_live_" + strings.Repeat("0", 40) + "\n", false},
		{"entropy above floor", "shippo_live_3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f0a\n", true},
		{"keyword rule", "KUCOIN_ID: 5f3a9c1e7b2d4f6a8c0e9b1d\n", true},
		{"global allowlist: one letter repeated", "KUCOIN_ID: " + strings.Repeat("a", 24) + "\n", false},
	} {
		out := s.Scrub(tc.text)
		if got := out != tc.text; got != tc.redact {
			t.Errorf("%s: redacted=%v, want %v: %q", tc.name, got, tc.redact, out)
		}
	}
}

// Our own rules win over gitleaks on the same secret.
func TestGitleaksOwnRuleFirst(t *testing.T) {
	s := newTestScrubber(t, nil)
	out := s.Scrub("LINEAR=lin_api_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0\n")
	if strings.Contains(out, "gitleaks") || !strings.Contains(out, markerPrefix) {
		t.Errorf("got %q", out)
	}
}

// Rules we leave out are not loaded at all; the rest are many.
func TestGitleaksRuleSet(t *testing.T) {
	g, err := loadGitleaks()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.rules) < 200 {
		t.Errorf("only %d gitleaks rules loaded", len(g.rules))
	}
	for _, r := range g.rules {
		if _, off := gitleaksDisabled[r.id]; off {
			t.Errorf("disabled rule %s loaded", r.id)
		}
	}
	if len(g.keywords) == 0 || len(g.kwRules) != len(g.keywords) {
		t.Errorf("keywords %d, kwRules %d", len(g.keywords), len(g.kwRules))
	}
}

// Output crowded with keywords gets gitleaks' rules on its first
// gitleaksMaxWindows windows only; our own rules still see all of it.
func TestGitleaksWindowBound(t *testing.T) {
	s := newTestScrubber(t, nil)
	const secret = "shippo_live_3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f0a"
	var b strings.Builder
	for range gitleaksMaxWindows + 10 {
		b.WriteString(secret + strings.Repeat(" filler", 200) + "\n")
	}
	b.WriteString("password=Xq7zP2mL9vK4wR\n")
	out := s.Scrub(b.String())
	// Each line has three windows (rules for "shippo_" and two for "live_").
	if n := strings.Count(out, "[REDACTED:gitleaks:shippo-api-token]"); n < gitleaksMaxWindows/3 || n >= gitleaksMaxWindows+10 {
		t.Errorf("%d gitleaks redactions, want the first lines' only", n)
	}
	if !strings.HasPrefix(out, "[REDACTED:gitleaks:shippo-api-token] filler") {
		t.Errorf("first line not redacted: %.80q", out)
	}
	if strings.Contains(out, "Xq7zP2mL9vK4wR") {
		t.Error("own rule did not run past the gitleaks bound")
	}
}

// The rules come from a private viper instance, and one Scrubber serves
// many goroutines.
func TestGitleaksConcurrent(t *testing.T) {
	s := newTestScrubber(t, nil)
	if keys := viper.AllKeys(); len(keys) != 0 {
		t.Errorf("global viper was written: %v", keys)
	}
	const secret = "shippo_test_0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3"
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if out := s.Scrub("key " + secret + "\n"); strings.Contains(out, secret) {
					t.Errorf("secret survives: %q", out)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestLineAround(t *testing.T) {
	text := "one\ntwo three\nfour"
	for _, tc := range []struct {
		a, b int
		want string
	}{
		{0, 3, "one"},
		{4, 7, "two three"},
		{8, 13, "two three"},
		{14, 18, "four"},
		{2, 6, "one\ntwo three"},
	} {
		if got := lineAround(text, tc.a, tc.b); got != tc.want {
			t.Errorf("lineAround(%d,%d) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

// allowed decides as gitleaks does for text with no commit and no path.
func TestGitleaksAllowed(t *testing.T) {
	list := func(a config.Allowlist) []*config.Allowlist {
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		return []*config.Allowlist{&a}
	}
	re := regexp.MustCompile
	for _, tc := range []struct {
		name  string
		lists []*config.Allowlist
		want  bool
	}{
		{"regex on secret", list(config.Allowlist{Regexes: []*regexp.Regexp{re(`^EXAMPLE`)}}), true},
		{"regex on match", list(config.Allowlist{RegexTarget: "match", Regexes: []*regexp.Regexp{re(`key=`)}}), true},
		{"regex on line", list(config.Allowlist{RegexTarget: "line", Regexes: []*regexp.Regexp{re(`^# docs`)}}), true},
		{"regex misses", list(config.Allowlist{Regexes: []*regexp.Regexp{re(`^nope`)}}), false},
		{"stop word", list(config.Allowlist{StopWords: []string{"example"}}), true},
		{"AND: regex and stop word", list(config.Allowlist{MatchCondition: config.AllowlistMatchAnd,
			Regexes: []*regexp.Regexp{re(`^EXAMPLE`)}, StopWords: []string{"example"}}), true},
		{"AND: stop word missing", list(config.Allowlist{MatchCondition: config.AllowlistMatchAnd,
			Regexes: []*regexp.Regexp{re(`^EXAMPLE`)}, StopWords: []string{"nope"}}), false},
		{"AND with a path never holds here", list(config.Allowlist{MatchCondition: config.AllowlistMatchAnd,
			Paths: []*regexp.Regexp{re(`.*`)}, Regexes: []*regexp.Regexp{re(`^EXAMPLE`)}}), false},
		{"no lists", nil, false},
	} {
		got := allowed(tc.lists, "EXAMPLEq7Zr2Lm9Xw4", "key=EXAMPLEq7Zr2Lm9Xw4", "# docs: key=EXAMPLEq7Zr2Lm9Xw4")
		if got != tc.want {
			t.Errorf("%s: allowed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Trimming the name context in front of a rule's keyword changes where a
// match starts, never which secrets it finds: for every trimmed rule, the
// original and the trimmed regexp give the same secret spans on lines
// shaped like real assignments of each keyword, and on our corpus.
func TestGitleaksTrimmedRulesFindTheSame(t *testing.T) {
	vc, err := gitleaksConfig()
	if err != nil {
		t.Fatal(err)
	}
	values := []string{
		"3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e",
		"3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f0a",
		"Zx8Kq2Lm4Np6Rs0Tv3Wy5Ab7Cd9Ef1Gh",
		"Zx8Kq2Lm4Np6Rs0Tv3Wy5Ab7Cd9Ef1Gh3Jk5Lm7N",
		"Zx8Kq2Lm4Np6Rs0Tv3Wy5Ab7Cd9Ef1Gh3Jk5Lm7NpQr2St4Uv6Wx8Yz0Ab2Cd4Ef",
		"1c7e5b2d-8f4a-6c0e-9b1d-7f3a5c8e2b4d",
		"key-3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e",
		"00Zx8Kq2Lm4Np6Rs0Tv3Wy5Ab7Cd9Ef1Gh3Jk5Lm7N",
		"123456789:AAZx8Kq2Lm4Np6Rs0Tv3Wy5Ab7Cd9Ef1Gh3J",
		"sk_Zx8Kq2Lm4Np6Rs0Tv3Wy5Ab7Cd",
	}
	var corpus strings.Builder
	for _, dir := range []string{"secrets", "benign"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.txt"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			corpus.Write(b)
		}
	}
	trimmed, matched := 0, 0
	for _, r := range vc.Rules {
		short := trimLeadingContext(r.Regex)
		if short == r.Regex {
			continue
		}
		trimmed++
		orig, cut := regexp.MustCompile(r.Regex), regexp.MustCompile(short)
		var b strings.Builder
		for _, k := range r.Keywords {
			for _, v := range values {
				for _, line := range []string{
					"%k_API_KEY=%v\n", "export MY_%k_TOKEN=\"%v\"\n", "%k.secret: '%v'\n",
					"{\"%k_key\": \"%v\"}\n", "x %k %v\n", "prod-%k-secret := %v;\n",
				} {
					line = strings.ReplaceAll(line, "%k", k)
					b.WriteString(strings.ReplaceAll(line, "%v", v))
				}
			}
		}
		// Lines the original regexp itself describes, with varied picks.
		parsed, err := syntax.Parse(r.Regex, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		for seed := range 5 {
			g := sampler{seed: seed}
			g.write(parsed.Simplify())
			b.WriteString("line: " + g.b.String() + "\n")
		}
		b.WriteString(corpus.String())
		text := b.String()
		want, got := secretSpans(orig, r.SecretGroup, text), secretSpans(cut, r.SecretGroup, text)
		if len(want) > 0 {
			matched++
		}
		if !slices.Equal(want, got) {
			t.Errorf("%s: trimmed rule finds %v, the original %v", r.ID, got, want)
		}
	}
	if matched < trimmed {
		t.Errorf("only %d of %d trimmed rules matched the test lines", matched, trimmed)
	}
	if trimmed < 90 {
		t.Errorf("only %d rules trimmed; has gitleaks' rule shape changed?", trimmed)
	}
}

// sampler writes a string a regexp matches, choosing among classes and
// alternatives by seed so that several samples differ.
type sampler struct {
	b    strings.Builder
	seed int
	n    int
}

func (g *sampler) pick(k int) int {
	g.n++
	return (g.seed*31 + g.n*7) % k
}

func (g *sampler) write(re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		g.b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		ranges := len(re.Rune) / 2
		if ranges == 0 {
			return
		}
		i := g.pick(ranges)
		lo, hi := re.Rune[2*i], re.Rune[2*i+1]
		c := lo + rune(g.pick(int(min(hi-lo+1, 1<<16))))
		if c < ' ' || c > '~' {
			c = lo
		}
		g.b.WriteRune(c)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		g.b.WriteByte('x')
	case syntax.OpCapture:
		g.write(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			g.write(sub)
		}
	case syntax.OpAlternate:
		g.write(re.Sub[g.pick(len(re.Sub))])
	case syntax.OpStar, syntax.OpPlus:
		for range 2 {
			g.write(re.Sub[0])
		}
	case syntax.OpQuest:
		if g.pick(2) == 0 {
			g.write(re.Sub[0])
		}
	case syntax.OpRepeat:
		n := re.Min
		if re.Max > re.Min {
			n += g.pick(min(re.Max-re.Min, 8) + 1)
		} else if re.Max < 0 {
			n += 2
		}
		for range n {
			g.write(re.Sub[0])
		}
	}
}

// secretSpans lists the secret group's extents of every match, as the
// scrubber picks the group.
func secretSpans(re *regexp.Regexp, group int, text string) [][2]int {
	var out [][2]int
	for _, loc := range re.FindAllStringSubmatchIndex(text, -1) {
		a, b := loc[0], loc[1]
		if group > 0 {
			a, b = loc[2*group], loc[2*group+1]
		} else {
			for i := 2; i+1 < len(loc); i += 2 {
				if loc[i] >= 0 && loc[i+1] > loc[i] {
					a, b = loc[i], loc[i+1]
					break
				}
			}
		}
		out = append(out, [2]int{a, b})
	}
	return out
}

// A rule whose matches begin with a case-sensitive literal skips keyword
// hits in another case, and still finds its secrets.
func TestGitleaksKeywordLiteral(t *testing.T) {
	g, err := loadGitleaks()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range g.rules {
		if r.lit != "" {
			n++
		}
	}
	if n < 10 {
		t.Errorf("only %d rules with a keyword literal", n)
	}
	if keywordLiteral(regexp.MustCompile(`SK[0-9a-f]{32}`), []string{"sk"}) != "SK" ||
		keywordLiteral(regexp.MustCompile(`SK[0-9a-f]{32}`), []string{"sk", "api"}) != "" ||
		keywordLiteral(regexp.MustCompile(`(?i)sk[0-9a-f]{32}`), []string{"sk"}) != "" {
		t.Error("keywordLiteral")
	}
	s := newTestScrubber(t, nil)
	const key = "SK3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e"
	for _, text := range []string{
		"ask the task runner: " + key + " is the key\n",
		key + "\n",
		"disk " + strings.Repeat("x", 600) + " " + key + "\n",
	} {
		if out := s.Scrub(text); strings.Contains(out, key) {
			t.Errorf("key survives in %q", out)
		}
	}
}
