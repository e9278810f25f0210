package shellsyntax

import (
	"strings"
	"testing"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

func TestIsName(t *testing.T) {
	for s, want := range map[string]bool{
		"a": true, "_x1": true, "PATH": true,
		"": false, "1a": false, "a-b": false, "a b": false, "é": false,
	} {
		if got := IsName(s); got != want {
			t.Errorf("IsName(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestDeepBrackets(t *testing.T) {
	for _, tt := range []struct {
		src   string
		limit int
		want  int
	}{
		{"echo $(a)", 1, -1},
		{"echo $($(a))", 1, 8},
		{"echo '((((' x", 1, -1}, // single quotes hide brackets
		{`echo \(\( x`, 1, -1},   // so do escapes
		{"(a) (b) (c)", 1, -1},   // depth, not count
		{"{ ( x ); }", 1, 2},
		{strings.Repeat("$((", 100), 128, 193}, // the 129th bracket
	} {
		if got := DeepBrackets(tt.src, tt.limit); got != tt.want {
			t.Errorf("DeepBrackets(%q, %d) = %d, want %d", tt.src, tt.limit, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	if f, err := ParseBash("a | b; [[ -n x ]]"); err != nil || len(f.Stmts) != 2 {
		t.Errorf("ParseBash: %v", err)
	}
	if f, err := ParseBashComments("a # note"); err != nil || len(f.Stmts) != 1 || len(f.Stmts[0].Comments) != 1 {
		t.Errorf("ParseBashComments kept no comment: %v", err)
	}
	if _, err := ParseArithm("1 + (2"); err == nil {
		t.Error("ParseArithm accepted an unclosed parenthesis")
	}
	if w, err := ParseDocument("a $(b) ${c}"); err != nil || len(w.Parts) != 4 {
		t.Errorf("ParseDocument: %v", err)
	}
}

// FuzzQuote checks that Quote's word reads back, as bash reads it, as
// exactly the input, and that DeepBrackets never reports past the text.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "a", "it's", "'", "\n$`\\", "''"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			return // the callers refuse these before quoting
		}
		if at := DeepBrackets(s, 2); at >= len(s) {
			t.Fatalf("DeepBrackets(%q) = %d, past the end", s, at)
		}
		file, err := ParseBash("x " + Quote(s))
		if err != nil {
			t.Fatalf("Quote(%q) = %q does not parse: %v", s, Quote(s), err)
		}
		call, ok := file.Stmts[0].Cmd.(*syntax.CallExpr)
		if !ok || len(file.Stmts) != 1 || len(call.Args) != 2 {
			t.Fatalf("Quote(%q) = %q is not one word", s, Quote(s))
		}
		if got, err := expand.Fields(&expand.Config{}, call.Args[1]); err != nil || len(got) != 1 || got[0] != s {
			t.Fatalf("Quote(%q) = %q reads back as %q, %v", s, Quote(s), got, err)
		}
	})
}
