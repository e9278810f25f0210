package policy

import (
	"reflect"
	"strings"
	"testing"
)

// shCommandsOf walks src and returns the normalised text of every command
// found, in order.
func shCommandsOf(t *testing.T, src string) []string {
	t.Helper()
	w := newShWalker()
	w.walkScript(src, &shScope{pos0: shArg{e: "sh", p: "sh"}, posKnown: true}, nil)
	if w.err != nil {
		t.Fatalf("%q: %v", src, w.err)
	}
	var out []string
	for _, s := range w.segs {
		if s.kind == segCmd {
			out = append(out, s.text)
		}
	}
	return out
}

func TestShellSplitSegments(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{`a | b || c && d; e & f`, []string{"a", "b", "c", "d", "e", "f"}},
		{"a\nb\n\nc", []string{"a", "b", "c"}},
		{`a |& b`, []string{"a", "b"}},
		{`! a`, []string{"a"}},
		{`(a; b) | { c; d; }`, []string{"a", "b", "c", "d"}},
		{`x $(a) "$(b)" ` + "`c`", []string{"a", "b", "c", "x "}}, // "$(b)" stays an (empty) argument
		{`x <(a) >(b)`, []string{"a", "x /dev/fd/63 /dev/fd/62", "b"}},
		{`if a; then b; elif c; then d; else e; fi`, []string{"a", "b", "c", "d", "e"}},
		{`while a; do b; done; until c; do d; done`, []string{"a", "b", "c", "d"}},
		{`for i in 1 2; do a $i; done`, []string{"a 1", "a 2"}},
		{`for i in 1 2; do a $i; done; echo $i`, []string{"a 1", "a 2", "echo 1", "echo 2"}},
		{`for ((i=0; i<3; i++)); do a; done`, []string{"a"}},
		{`select x in a b; do c; done`, []string{"c"}},
		{`case $x in a|b) c;; (d) e;& *) f;;& esac`, []string{"c", "e", "f"}},
		{`f() { a; }; function g { b; }; f; g`, []string{"a", "b", "f", "a", "g", "b"}},
		{`[[ -f $(a) && x == y ]]`, []string{"a"}},
		{`(( x = $(a) + 1 ))`, []string{"a", "x = + 1", "a"}}, // dash reads (( as subshells
		{"a <<EOF\n$(b)\nEOF\nc", []string{"b", "a", "c"}},
		{"a <<'EOF'\n$(b)\nEOF\nc", []string{"a", "c"}},
		{"a <<-EOF\n\t$(b)\n\tEOF\nc", []string{"b", "a", "c"}},
		{`a <<< "$(b)"`, []string{"b", "a"}},
		{`a 2>&1 >out <in 3<>rw &>all`, []string{"a 2>&1 >out <in 3<>rw &>all"}},
		{"a \\\n  b", []string{"a b"}},
		{"a # b; c\nd", []string{"a", "d"}},
		{`a 'b c' "d $x" e\ f`, []string{"a b c d  e f"}},
		{`arr=(a b c); echo ${arr[1]} ${#arr[@]}`, []string{"echo b 3"}},
		{`x=1; y=${x:-2}; echo $y ${z:-3} ${x:+4}`, []string{"echo 1 3 4"}},
		{`p=/a/b.txt; echo ${p##*/} ${p%.*} ${p/b/c}`, []string{"echo b.txt /a/b /a/c.txt"}},
		{`echo $'a\tb' $"c"`, []string{"echo a\tb c"}},
		{`echo {a,b}{1,2}`, []string{"echo a1 a2 b1 b2"}},
		{`echo {1..3} {c..a}`, []string{"echo 1 2 3 c b a"}},
		{`echo '{a,b}' x{}y {single}`, []string{"echo {a,b} x{}y {single}"}},
		{`coproc a; coproc N { b; }`, []string{"a", "b"}},
		{`time -p a`, []string{"time -p a", "a"}},
		{`env X=1 nice -n 5 a b`, []string{"env X=1 nice -n 5 a b", "X=1 nice -n 5 a b", "X=1 a b"}},
		{`sh -c 'a "$1"' x y`, []string{"sh -c a \"$1\" x y", "a y"}},
		{`echo a | xargs b`, []string{"echo a", "xargs b", "b a"}},
		{`find . -exec a {} \;`, []string{"find . -exec a {} ;", "a ."}},
	}
	for _, tc := range cases {
		got := shCommandsOf(t, tc.src)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.src, got, tc.want)
		}
	}
}

func TestShellParseErrors(t *testing.T) {
	cases := []struct{ src, rule string }{
		{`echo 'a`, "unbalanced"},
		{`echo "a`, "unbalanced"},
		{`echo $'a`, "unbalanced"},
		{"echo `a", "unbalanced"},
		{`echo $(a`, "unbalanced"},
		{`echo ${a`, "unbalanced"},
		{`echo $((1+2)`, "unbalanced"},
		{`(a`, "unbalanced"},
		{`{ a;`, "unbalanced"},
		{`if a; then b`, "unbalanced"},
		{`while a; do b`, "unbalanced"},
		{`case a in b) c;;`, "unbalanced"},
		{`a )`, "syntax"},
		{`| a`, "syntax"},
		{`a &&`, "syntax"},
		{`a ;;`, "syntax"},
		{`then a`, "syntax"},
		{`a > `, "syntax"},
		{`echo ${}`, "syntax"},
		{`f() a`, "syntax"},
		{strings.Repeat("( ", 9) + "a" + strings.Repeat(")", 9), "too_deep"},
		{strings.Repeat("(", 20) + "a" + strings.Repeat(")", 20), "too_deep"},
		{strings.Repeat("$(", 9) + "a" + strings.Repeat(")", 9), "too_deep"},
	}
	for _, tc := range cases {
		work := shMaxWork
		_, err := shParse(tc.src, 0, &work)
		if err == nil || err.Rule != tc.rule {
			t.Errorf("shParse(%q) = %v, want parse/%s", tc.src, err, tc.rule)
		}
	}
}

func TestShellGlobIntersect(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"/etc/shadow", "/etc/sh?dow", true},
		{"/etc/shadow", "/e*/shadow", true},
		{"/etc/shadow", "/etc/[a-z]hadow", true},
		{"/etc/shadow", "/etc/[!s]hadow", false},
		{"/etc", "/???", true},
		{"/etc", "/????", false},
		{"/etc", "/*", true},
		{"/etc", "/*/*", false},
		{"~/.ssh/id_*", "~/.ssh/*", true},
		{"~/.ssh/id_*", "~/.ssh/*.pub", true},
		{"/proc/*/environ", "/proc/*/env*", true},
		{"/dev/sd*", "/dev/s?a", true},
		{"/dev/sd*", "/dev/nvme*", false},
		{"/a/*", "/a/b/c", false},
	}
	for _, tc := range cases {
		if got := shGlobIntersect(tc.a, tc.b); got != tc.want {
			t.Errorf("shGlobIntersect(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestShellPathForms(t *testing.T) {
	cases := []struct {
		arg, cwd string
		want     []string
	}{
		{"/etc//./passwd", "", []string{"/etc/passwd"}},
		{"/root/.ssh/id_rsa", "", []string{"/root/.ssh/id_rsa", "~/.ssh/id_rsa"}},
		{"/home/bob/.aws/credentials", "", []string{"/home/bob/.aws/credentials", "~/.aws/credentials"}},
		{"~/x/../.ssh", "", []string{"~/.ssh"}},
		{"shadow", "/etc", []string{"/etc/shadow", "shadow"}},
		{"../../etc/shadow", "", []string{"../../etc/shadow", "/etc/shadow", "~/etc/shadow"}},
		{"x", "?", []string{"x", "/x", "~/x"}},
	}
	for _, tc := range cases {
		if got := shPathForms(tc.arg, tc.cwd); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("shPathForms(%q, %q) = %q, want %q", tc.arg, tc.cwd, got, tc.want)
		}
	}
}

func TestShellRequiredLiterals(t *testing.T) {
	cases := []struct {
		expr  string
		needs []string
	}{
		{`^(ip\s+link|ifconfig)\s`, []string{"link", "fconfig"}}, // factored as i(?:p\s+link|fconfig)
		{`(?i)metadata\.google\.internal|169\.254\.169\.254`, []string{"metadata.google.internal", "169.254.169.254"}},
		{`release_agent|notify_on_release`, []string{"release_agent", "notify_on_release"}},
		{`a*`, nil},
		{`(x|y*)z`, nil},
	}
	for _, tc := range cases {
		re, err := compileShRegexp(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(re.needs, tc.needs) {
			t.Errorf("%s: needs %q, want %q", tc.expr, re.needs, tc.needs)
		}
	}
}
