package shellsyntax

import (
	"fmt"
	"strings"
	"testing"
)

// words are test command lines: a word with a "$" is only known at run
// time, up to the "$".
type words []string

func (ws words) Len() int { return len(ws) }

func (ws words) Text(i int) (string, bool) {
	known, _, dollar := strings.Cut(ws[i], "$")
	return known, !dollar
}

func (ws words) IsAssign(i int) bool {
	name, _, ok := strings.Cut(ws[i], "=")
	return ok && IsName(name)
}

// walk renders an option walk as one line: kind:word[:name][=value][@valueword].
func walk(g *Grammar, ws []string) string {
	var out []string
	for o := range g.Options(words(ws), 0, words(ws).IsAssign) {
		s := fmt.Sprintf("%s:%d", kindNames[o.Kind], o.Word)
		if o.Name != "" {
			s += ":" + o.Name
		}
		if o.Attached {
			s += "=" + o.Value
		}
		if o.ValueWord >= 0 {
			s += fmt.Sprintf("@%d", o.ValueWord)
		}
		if o.NoExec {
			s += "!"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

var kindNames = map[OptKind]string{
	OptOperand: "operand", OptEnd: "end", OptAssign: "assign", OptFlag: "flag", OptShell: "shell",
	OptStdin: "stdin", OptJoinOff: "joinoff", OptValue: "value", OptCode: "code", OptMod: "mod",
	OptSplit: "split", OptProg: "prog",
}

func TestOptions(t *testing.T) {
	tests := []struct {
		prog  string
		words string
		want  string
	}{
		{"sh", "-c echo hi", "shell:0:c operand:1"},
		{"sh", "-ec echo", "flag:0:e shell:0:c operand:1"},
		{"sh", "-o pipefail -s", "value:0:o@1 stdin:2:s"},
		{"sh", "+o x -c", "value:0:o@1 shell:2:c"},
		{"sh", "-oc x y", "value:0:o shell:0:c operand:1"},
		{"sh", "-co x y", "shell:0:c value:0:o@1 operand:2"},
		{"bash", "--rcfile f --command=ls", "value:0:rcfile@1 code:2:command=ls"},
		{"bash", "--command", "code:0:command"},
		{"perl", "-Mstrict -e print x", "mod:0:M=strict code:1:e@2 operand:3"},
		{"perl", "-wle print", "flag:0:w flag:0:l code:0:e@1"},
		{"perl", "-e", "code:0:e"},
		{"awk", "-f prog.awk x -v a=1 y", "prog:0:f@1 operand:2 value:3:v@4 operand:5"},
		{"awk", "--file=p -- -x", "prog:0:file=p end:1"},
		{"env", "- A=1 -S 'a b' -u X cmd -c", "flag:0 assign:1 split:2:S@3 value:4:u@5 operand:6"},
		{"env", "-Sab cmd", "split:0:S=ab operand:1"},
		{"sudo", "-u root -s id", "value:0:u@1 shell:2:s operand:3"},
		{"sudo", "-l", "flag:0:l!"},
		{"ionice", "-p 1 cmd", "value:0:p@1! operand:2"},
		{"nice", "-5 cmd", "flag:0:5 operand:1"},
		{"nice", "-n5 cmd", "value:0:n=5 operand:1"},
		{"watch", "-x -n 1 ls", "joinoff:0:x value:1:n@2 operand:3"},
		{"systemd-run", "--unit x --pty cmd", "value:0:unit@1 flag:2:pty operand:3"},
		{"systemd-run", "--property=a cmd", "value:0:property=a operand:1"},
		{"timeout", "$T cmd", "operand:0"},
		{"python", "$X -c code", "operand:0"},
		{"sed", "x -e s/a/b/ -- -y", "operand:0 code:1:e@2 end:3"},
		{"tar", "-xf a.tar --to-command=sh", "flag:0:x flag:0:f operand:1 code:2:to-command=sh"},
		{"sudo", "A=1 -u", "assign:0 value:1:u"},
		{"sh", "-", "operand:0"},
		{"sh", "", ""},
		{"xargs", "-0 -I {} -i -ix --replace --eof=e -n 1 cmd", "flag:0:0 value:1:I@2 value:3:i value:4:i=x value:5:replace value:6:eof=e value:7:n@8 operand:9"},
		{"xargs", "-r0n1 -d, sh", "flag:0:r flag:0:0 value:0:n=1 value:1:d=, operand:2"},
		// Every option long, one dash or two (getopt_long_only).
		{"gdb", "-batch -ex bt -x f --ex=c ./app -nx", "flag:0:batch code:1:ex@2 prog:3:x@4 code:5:ex=c operand:6 flag:7:nx"},
		{"gdb", "-ex=$X -x$Y", "code:0:ex= operand:1"},
		// A value only known at run time, attached to its option.
		{"tar", "-xf a --to-command=$X", "flag:0:x flag:0:f operand:1 code:2:to-command="},
		{"ssh", "-oProxyCommand=$X host", "mod:0:o=ProxyCommand= operand:1"},
		{"perl", "-e$X", "code:0:e="},
		{"sh", "-x$X -c", "operand:0"},
		{"sh", "--$X -c", "operand:0"},
	}
	for _, tt := range tests {
		t.Run(tt.prog+" "+tt.words, func(t *testing.T) {
			g := GrammarOf(tt.prog)
			if g == nil {
				t.Fatalf("no grammar for %s", tt.prog)
			}
			words := strings.Fields(strings.ReplaceAll(tt.words, "'a b'", "a_b"))
			if got := walk(g, words); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestGrammarLetterSets: no option letter is in two sets of one grammar
// (but a no-exec letter may take a value), so the walk's order of
// precedence never decides what an option is.
func TestGrammarLetterSets(t *testing.T) {
	for name, g := range grammars {
		sets := map[string]string{"code": g.CodeOpts, "mod": g.ModOpts, "split": g.SplitOpts, "prog": g.ProgOpts,
			"value": g.ValueOpts, "shell": g.ShellFlags, "stdin": g.StdinFlags, "joinoff": g.JoinOff, "opt": g.OptOpts}
		seen := map[rune]string{}
		for set, letters := range sets {
			for _, ch := range letters {
				if other, ok := seen[ch]; ok {
					t.Errorf("%s: -%c is in %s and %s", name, ch, other, set)
				}
				seen[ch] = set
			}
		}
		longs := map[string]string{}
		for set, names := range map[string][]string{"code": g.CodeLong, "mod": g.ModLong, "split": g.SplitLong, "prog": g.ProgLong, "value": g.ValueLong, "opt": g.OptLong, "flag": g.FlagLong} {
			for _, n := range names {
				if other, ok := longs[n]; ok {
					t.Errorf("%s: --%s is in %s and %s", name, n, other, set)
				}
				longs[n] = set
			}
		}
	}
}

// FuzzOptions: any words, any grammar: the walk ends, steps forward, and
// every index it names is a word of the line.
func FuzzOptions(f *testing.F) {
	for _, s := range []string{"sh -c x", "env - A=1 -S x cmd", "awk -f p x -v a=1", "perl -Mx -e", "sudo -u", "nice -5 x", "bash --rcfile", "tar -xf a --to-command=sh", "sed x -e y -- z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fields := strings.Fields(line)
		if len(fields) == 0 || len(fields) > 64 {
			return
		}
		g := GrammarOf(fields[0])
		if g == nil {
			g = awkGrammar
		}
		args := words(fields[1:])
		last := -1
		for o := range g.Options(args, 0, func(i int) bool { return strings.Contains(args[i], "=") }) {
			if o.Word < last || o.Word >= len(args) {
				t.Fatalf("%q: step at word %d after %d", line, o.Word, last)
			}
			if o.ValueWord >= 0 && (o.ValueWord != o.Word+1 || o.Attached || !o.Kind.TakesValue()) {
				t.Fatalf("%q: bad value word %+v", line, o)
			}
			if known, _ := args.Text(o.Word); o.Attached && !o.Long && !strings.HasSuffix(known, o.Value) {
				t.Fatalf("%q: attached value %q not in %q", line, o.Value, args[o.Word])
			}
			last = o.Word
			if o.ValueWord >= 0 {
				last = o.ValueWord + 1
			}
		}
	})
}
