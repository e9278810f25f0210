package shellguard

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShellNormalise(t *testing.T) {
	cases := []struct{ in, want string }{
		{"rm -rf /", "rm -rf /"},
		{"ｒｍ", "rm"},                   // fullwidth letters
		{"r\u200bm", "rm"},             // zero-width space
		{"r\u200cm\u200d", "rm"},       // zero-width (non-)joiner
		{"r\u200e\u200fm", "rm"},       // LRM, RLM
		{"\u2060r\u2061m\u2064", "rm"}, // word joiner, invisible operators
		{"\ufeffrm", "rm"},             // BOM
		{"r\u00adm", "rm"},             // soft hyphen
		{"\u202erm\u202c", "rm"},       // bidi override and pop
		{"\u2066rm\u2069", "rm"},       // bidi isolates
		{"r\ufe0fm", "rm"},             // variation selector
		{"r\u034fm", "rm"},             // combining grapheme joiner
		{"\U000e0072\U000e006d", ""},   // tag characters
		{"ﬁle", "file"},                // ligature
		{"a\u00a0b", "a b"},            // no-break space
		{"\u2024", "."},                // one dot leader
		{"／etc／shadow", "/etc/shadow"}, // fullwidth solidus
		{"e\u0301", "\u00e9"},          // composed
		{"e\u200d\u0301", "\u00e9"},    // composes once the joiner is gone
		{"⁄", "⁄"},                     // fraction slash stays itself
		{"Дом", "Дом"},                 // other scripts are untouched
	}
	for _, tc := range cases {
		if got := normalise(tc.in); got != tc.want {
			t.Errorf("shellNormalise(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestShellCheckInput(t *testing.T) {
	cases := []struct{ in, rule string }{
		{"echo hi", ""},
		{"echo\thi\nls", ""},
		{"echo \u00e9\u200b", ""},
		{"a\x00", "nul_byte"},
		{"a\x07", "control_char"},
		{"a\r\n", "control_char"},
		{"a\x7f", "control_char"},
		{"a\u0085", "control_char"},
		{"a\xc3", "invalid_utf8"},
		{strings.Repeat("x", maxInput+1), "too_long"},
	}
	for _, tc := range cases {
		err := checkInput(tc.in)
		switch {
		case tc.rule == "" && err != nil:
			t.Errorf("shellCheckInput(%.20q) = %v", tc.in, err)
		case tc.rule != "" && (err == nil || err.Rule != tc.rule || err.Group != "parse"):
			t.Errorf("shellCheckInput(%.20q) = %v, want parse/%s", tc.in, err, tc.rule)
		}
	}
}

func TestShellDecodeANSIC(t *testing.T) {
	cases := []struct{ in, want string }{
		{`\x72m`, "rm"},
		{`\162\155`, "rm"},
		{`\u0072\U0000006d`, "rm"},
		{`a\tb\nc`, "a\tb\nc"},
		{`\'`, "'"},
		{`\\`, `\`},
		{`\cA`, "\x01"},
		{`\e[0m`, "\x1b[0m"},
		{`\xZ`, `\xZ`},
		{`ab\x00cd`, "ab"}, // NUL ends the string, as in bash
		{`\q`, `\q`},
		{`trailing\`, `trailing\`},
	}
	for _, tc := range cases {
		if got := decodeANSIC(tc.in); got != tc.want {
			t.Errorf("shDecodeANSIC(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestShellEchoAndPrintf(t *testing.T) {
	if got := echoEscapes(`\0162\0155 -rf /\c ignored`); got != "rm -rf /" {
		t.Errorf("echo escapes: %q", got)
	}
	d := printfData(literalArgs([]string{`%s %b\x2f %c%d`, "rm", `-r\x66`, "zz", "7"}))
	if !d.known() || d.texts[0] != "rm -rf/ z7" {
		t.Errorf("printf: %q", d.texts)
	}
	d = printfData(literalArgs([]string{`%s\n`, "a", "b"}))
	if d.texts[0] != "a\nb\n" {
		t.Errorf("printf reuse of format: %q", d.texts[0])
	}
}

// FuzzNormalise checks that normalisation never panics, is idempotent,
// leaves no invisible characters, keeps UTF-8 valid and leaves ASCII
// alone; and that the input check and the lexer cope with anything.
func FuzzNormalise(f *testing.F) {
	for _, s := range []string{"rm -rf /", "ｒｍ", "r\u200bm", "e\u200d\u0301", "\u202e", "ﬁ", "\xff", "$'\\x72m'", "a\u0301\u200d\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := normalise(s)
		if n2 := normalise(n); n2 != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, n2)
		}
		if utf8.ValidString(s) && !utf8.ValidString(n) {
			t.Fatalf("invalid UTF-8 from %q: %q", s, n)
		}
		for _, r := range n {
			if isInvisible(r) {
				t.Fatalf("invisible %U left in %q (from %q)", r, n, s)
			}
		}
		ascii := true
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				ascii = false
			}
		}
		if ascii && n != s {
			t.Fatalf("ASCII changed: %q -> %q", s, n)
		}
		_ = decodeANSIC(s)
		_ = echoEscapes(s)
		if checkInput(s) == nil {
			work := maxWork
			_, _ = parse(s, 0, &work)
		}
	})
}
