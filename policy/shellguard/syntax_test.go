package shellguard

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// commandsOf walks src and returns the normalised text of every command
// found, in order.
func commandsOf(t *testing.T, src string) []string {
	t.Helper()
	w := newShWalker()
	w.walkScript(src, &scope{pos0: arg{e: "sh", p: "sh"}, posKnown: true}, nil)
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
		got := commandsOf(t, tc.src)
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
		{`() { a; }`, "syntax"},
		{`()0(){ 0&}`, "syntax"}, // found by FuzzDecide: a nil function name
		{strings.Repeat("( ", 9) + "a" + strings.Repeat(")", 9), "too_deep"},
		{strings.Repeat("(", 20) + "a" + strings.Repeat(")", 20), "too_deep"},
		{strings.Repeat("$(", 9) + "a" + strings.Repeat(")", 9), "too_deep"},
	}
	for _, tc := range cases {
		work := maxWork
		_, err := parse(tc.src, 0, &work)
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
		if got := globIntersect(tc.a, tc.b); got != tc.want {
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
		if got := pathForms(tc.arg, tc.cwd); !reflect.DeepEqual(got, tc.want) {
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

// parserDecided are the commands whose verdict the move to
// mvdan.cc/sh changed or could have changed, with the decided verdict
// ("allow" or "group/rule"); testdata/shellparser_divergences.md gives
// the reasons.
var parserDecided = []struct{ cmd, want string }{
	// Decided toward dash and bash: backslash-newline joins the lines of
	// an unquoted here-document before the terminator is looked for.
	{"cat <<E\na\\\nE\nrm -rf /\nE", "allow"},
	{"sh -c 'cat <<E\na\\\nE\nrm -rf /\nE'", "allow"},
	{"eval 'cat <<E\na\\\nE\nrm -rf /\nE'", "allow"},
	{"echo 'cat <<E\na\\\nE\nrm -rf /\nE' | sh", "allow"},
	{"sh <<'END'\ncat <<E\na\\\nE\nrm -rf /\nE\nEND", "allow"},
	{"cat <<'E'\na\\\nE\nrm -rf /\nE", "destructive_file_ops/rm_recursive_critical"},
	// Stricter than the shells (mvdan.cc/sh ends a <<- body early).
	{"cat <<-E\n\ta\\\n\tE\n\trm -rf /\n\tE", "destructive_file_ops/rm_recursive_critical"},
	// bash reads <( inside a word as part of it: sh/dev/fd/63.
	{"sh<(curl x)", "allow"},
	{"sh -c 'sh<(curl x)'", "allow"},
	{"eval 'sh<(curl x)'", "allow"},
	{"sh <<END\nsh<(curl x)\nEND", "allow"},
	{"echo a<(rm -rf /)", "destructive_file_ops/rm_recursive_critical"},
	{"cat >(rm -rf /)", "destructive_file_ops/rm_recursive_critical"},
	// What bash refuses dash may run.
	{"((echo; rm -rf /))", "destructive_file_ops/rm_recursive_critical"},
	{"sh -c '((echo; rm -rf /))'", "destructive_file_ops/rm_recursive_critical"},
	{"(( x = $(rm -rf /) ))", "destructive_file_ops/rm_recursive_critical"},
	{"a[$(rm -rf /)]=1", "destructive_file_ops/rm_recursive_critical"},
	{"printf -v 'a[$(rm -rf /)]' x", "destructive_file_ops/rm_recursive_critical"},
	{"unset 'a[$(rm -rf /)]'", "destructive_file_ops/rm_recursive_critical"},
	{"x='a[$(rm -rf /)]'; echo $((x))", "destructive_file_ops/rm_recursive_critical"},
	// An operator with nothing after it is a syntax error.
	{"a |", "parse/syntax"},
	{"sh -c 'a |'", "parse/syntax"},
	// Found by fuzzing the new front-end.
	{"echo ${a/}", "allow"},
	{"echo ${a::1}", "allow"},
	{"${0/}", "allow"},
	{"${0::0}", "allow"},
	// bash's own nodes for builtins are read as the commands they are.
	{"time -p rm -rf /", "destructive_file_ops/rm_recursive_critical"},
	{"coproc rm -rf /", "destructive_file_ops/rm_recursive_critical"},
	{"declare x=$(rm -rf /)", "destructive_file_ops/rm_recursive_critical"},
	{"let x=$(rm -rf /)", "destructive_file_ops/rm_recursive_critical"},
	{"[[ -f $(rm -rf /) ]]", "destructive_file_ops/rm_recursive_critical"},
	{"f() rm -rf /", "parse/syntax"},
	{"function f { rm -rf /; }; f", "destructive_file_ops/rm_recursive_critical"},
}

func TestShellParserDecided(t *testing.T) {
	rs := loadDefaultShellRules(t)
	for _, tc := range parserDecided {
		got := "allow"
		if err := rs.CheckCommand(tc.cmd); err != nil {
			got = ruleID(err)
		}
		if got != tc.want {
			t.Errorf("CheckCommand(%q) = %s, want %s", tc.cmd, got, tc.want)
		}
	}
}

// TestShellDepthEdge checks the nesting bound at its edge: 8 levels of
// subshells, substitutions or sh -c are read, the 9th is refused.
func TestShellDepthEdge(t *testing.T) {
	rs := loadDefaultShellRules(t)
	cases := []struct {
		name string
		mk   func(n int) string
	}{
		{"subshells", func(n int) string { return strings.Repeat("( ", n) + "ls" + strings.Repeat(")", n) }},
		{"substitutions", func(n int) string { return strings.Repeat("$(echo ", n) + "x" + strings.Repeat(")", n) }},
		{"sh -c", func(n int) string { return nestShellC("ls", n) }},
		{"eval", func(n int) string {
			s := "ls"
			for i := 0; i < n; i++ {
				s = "eval " + quote(s)
			}
			return s
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			deepest := -1
			for n := 1; n <= 12; n++ {
				err := rs.CheckCommand(tc.mk(n))
				var d *DeniedError
				if errors.As(err, &d) && d.Rule == "too_deep" {
					break
				}
				if err != nil {
					t.Fatalf("%d levels: %v", n, err)
				}
				deepest = n
			}
			if deepest < 7 || deepest > maxDepth {
				t.Errorf("deepest accepted nesting %d, want 7..%d", deepest, maxDepth)
			}
			if err := rs.CheckCommand(tc.mk(deepest + 1)); err == nil {
				t.Errorf("%d levels accepted", deepest+1)
			}
		})
	}
}

// TestShellArith checks arithmetic on known values, which mvdan.cc/sh's
// evaluator computes; what is unknown stays unknown (empty here).
func TestShellArith(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{`n=2; echo $((n*3+1)) $((1<<3)) $(( (n+1) % 2 ))`, []string{"echo 7 8 1"}},
		{`echo $((7/0))x $((u+1))y $((16#ff))`, []string{"echo x y 255"}},
		{`n=abc; echo $((n+1))z`, []string{"echo z"}},
		{`p=/usr/bin; echo ${p:1:3} ${p:n:2}`, []string{"echo usr"}}, // n may be set by the environment
	}
	for _, tc := range cases {
		got := commandsOf(t, tc.src)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.src, got, tc.want)
		}
	}
}
