package shellsyntax

import (
	"fmt"
	"strings"
	"testing"
)

// reading renders what Read finds as one line: only the fields set.
func reading(r Reading) string {
	var out []string
	add := func(name string, i int) {
		if i >= 0 {
			out = append(out, fmt.Sprintf("%s=%d", name, i))
		}
	}
	for i, o := range r.Opts {
		if i == r.Tail {
			out = append(out, "|")
		}
		out = append(out, fmt.Sprintf("%s:%d", kindNames[o.Kind], o.Word))
	}
	add("operand", r.Operand)
	if r.Rest != r.Operand {
		add("rest", r.Rest)
	}
	add("cmd", r.Cmd)
	add("line", r.Line)
	add("code", r.Code)
	add("script", r.Script)
	add("args", r.Args)
	for _, f := range []struct {
		name string
		on   bool
	}{{"shell", r.ShellFlag}, {"noexec", r.NoExec}, {"stdin", r.Stdin}, {"program", r.Program}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	if r.Replace != "" {
		out = append(out, "replace="+r.Replace)
	}
	for _, e := range r.Exec {
		out = append(out, fmt.Sprintf("exec=%d-%d", e[0], e[1]))
	}
	return strings.Join(out, " ")
}

func TestRead(t *testing.T) {
	tests := []struct{ line, want string }{
		// Not in the table, or not known before it runs: nothing read.
		{"ls -l x", "operand=3 args=3"},
		{"$P -c x", "operand=3 args=3"},
		// Wrappers: options, NAME=value words, leading operands.
		{"env A=1 -u X cmd a", "assign:1 value:2 operand=4 cmd=4 args=6"},
		{"env a-b=1 cmd", "assign:1 operand=2 cmd=2 args=3"}, // env takes any name
		{"nice a-b=1 cmd", "operand=1 cmd=1 args=3"},
		{"env -S 'a_b' cmd", "split:1 operand=3 cmd=3 args=4"},
		{"env -S 'a_b'", "split:1 operand=3 args=3"},
		{"timeout -s KILL 5 cmd x", "value:1 operand=3 rest=4 cmd=4 args=6"},
		{"timeout 5", "operand=1 rest=2 args=2"},
		{"sudo -u root -s id x", "value:1 shell:3 operand=4 line=4 args=6 shell"},
		{"sudo -l cmd", "flag:1 operand=2 cmd=2 args=3 noexec"},
		{"sudo -- cmd", "operand=2 cmd=2 args=3"},
		{"ssh -o X=y host ls x", "mod:1 operand=3 rest=4 line=4 args=6"},
		// Options after the host, and "--" (issue 22).
		{"ssh host -t -- rm x", "| flag:2 operand=1 rest=2 line=4 args=6"},
		{"ssh -p 22 host -l root ls", "value:1 | value:4 operand=3 rest=4 line=6 args=7"},
		// Verbs with grammars of their own: the command a container, a
		// pod or a machine runs; other verbs run nothing.
		{"docker exec -it -u root web rm x", "flag:2 flag:2 value:3 operand=5 rest=6 cmd=6 args=8"},
		{"docker --context prod run --rm -v a:b img sh -c x", "value:1 flag:4 value:5 operand=7 rest=8 cmd=8 args=11"},
		{"docker ps -a", "operand=1 args=3"},
		{"docker run --entrypoint sh img -c x", "prog:2 operand=4 rest=5 cmd=5 args=7 program"},
		{"docker compose -f x.yml exec -T db psql", "value:2 flag:5 operand=6 rest=7 cmd=7 args=8"},
		{"kubectl exec -n ns pod -c app -- ls /", "value:2 | value:5 operand=4 rest=5 cmd=8 args=10"},
		{"kubectl exec pod ls", "operand=2 rest=3 cmd=3 args=4"},
		{"kubectl get pods", "operand=1 args=3"},
		{"lxc exec c1 --env A=1 -- ls", "| value:3 operand=2 rest=3 cmd=6 args=7"},
		{"vagrant ssh -c uptime", "code:2 operand=4 args=4 program"},
		{"watch -n 1 ls", "value:1 operand=3 line=3 args=4"},
		{"watch -x ls", "joinoff:1 operand=2 cmd=2 args=3"},
		{"flock /l -c text", "| code:2 operand=1 rest=2 args=4 program"},
		{"flock /l -w 5 cmd x", "| value:2 operand=1 rest=2 cmd=4 args=6"},
		{"flock /l cmd", "operand=1 rest=2 cmd=2 args=3"},
		{"script -qc text out", "flag:1 code:1 operand=3 cmd=3 args=4 program"},
		{"git -C d status -s", "value:1 operand=3 cmd=3 args=5"},
		{"parallel gzip ::: a", "operand=1 line=1 args=4"},
		{"tar -xf a --to-command=x", "flag:1 flag:1 code:3 operand=2 args=4 program"},
		// xargs: its command and replacement string.
		{"xargs -I % sh -c %", "value:1 operand=3 cmd=3 args=6 replace=%"},
		{"xargs -i cmd {}", "value:1 operand=2 cmd=2 args=4 replace={}"},
		{"xargs -ix cmd", "value:1 operand=2 cmd=2 args=3 replace=x"},
		{"xargs -0", "flag:1 operand=2 args=2"},
		// Shells: -c text, a script, standard input; a lone "-" is skipped.
		{"sh -c text a b", "shell:1 operand=2 code=2 args=3 shell"},
		{"sh -c - text a", "shell:1 operand=2 code=3 args=4 shell"},
		{"sh -c", "shell:1 operand=2 args=2 shell"},
		{"bash -o posix -c text", "value:1 shell:3 operand=4 code=4 args=5 shell"},
		{"sh x.sh a", "operand=1 script=1 args=2"},
		{"sh - x.sh a", "operand=1 script=2 args=3"},
		{"sh -", "operand=1 args=2 stdin"},
		{"sh -s a b", "stdin:1 operand=2 args=2 stdin"},
		{"sh", "operand=1 args=1 stdin"},
		{"bash --rcfile f x.sh", "value:1 operand=3 script=3 args=4"},
		{"fish --command=text", "code:1 operand=2 args=2 program"},
		// Interpreters: code options, modules, the program file, operands.
		{"python3 -c code a", "code:1 operand=3 args=3 program"},
		{"python3 -m mod a", "mod:1 operand=3 args=3 program"}, // -m runs the module
		{"python3 - a", "operand=1 script=1 args=2"},           // "-" is standard input
		{"python3 x.py a", "operand=1 script=1 args=2"},
		{"python3", "operand=1 args=1 stdin"},
		{"perl -Mx -e code", "mod:1 code:2 operand=4 args=4 program"},
		{"perl -Mx x.pl", "mod:1 operand=2 script=2 args=3"}, // a module is not the program
		{"perl -e 1 -Mx", "code:1 mod:3 operand=4 args=4 program"},
		{"awk prog f -v a=1", "value:3 operand=1 code=1 args=2"},
		{"awk -f p f", "prog:1 operand=3 args=3 program"},
		{"awk prog -f p", "prog:2 operand=1 code=1 args=2 program"}, // awk's options end at its program
		{"awk", "operand=1 args=1 stdin"},
		{"sed -n s/a/b/ f", "flag:1 operand=2 code=2 args=3"},
		{"deno eval code a", "operand=2 code=2 args=3"},
		{"deno run -A x.ts", "flag:2 operand=3 script=3 args=4"},
		{"php -d x=1 s.php", "mod:1 operand=3 script=3 args=4"},
		// Builtins that evaluate text, and source.
		{"eval a b", "operand=1 line=1 args=3"},
		{"eval", "operand=1 line=1 args=1"},
		{"trap -- text EXIT", "operand=2 code=2 args=4"},
		{"trap - INT", "operand=1 args=3"},
		{"trap text", "operand=1 args=2"},
		{"let a=1", "operand=1 args=2"},
		{". f a", "operand=3 script=1 args=2"},
		{"source", "operand=1 args=1"},
		// su and its kin.
		{"su -c text root", "code:1 operand=3 rest=4 args=4 program"},
		{"su root -lc text", "| flag:2 code:2 operand=1 rest=2 args=4 program"},
		{"su - root -c text", "| code:3 operand=1 rest=2 args=5 program"},
		{"runuser -u u -- cmd a", "value:1 operand=4 rest=5 cmd=4 args=6"},
		{"runuser -u u", "value:1 operand=3 args=3"},
		{"sg g text", "operand=1 rest=2 line=2 args=3"},
		{"sg - g text", "operand=1 rest=2 line=3 args=4"},
		{"sg g -c text", "| code:2 operand=1 rest=2 args=4 program"},
		// find: each -exec command.
		{"find . -exec rm {} ; -ok a b +", "operand=10 args=10 exec=3-5 exec=7-9"},
		{"find . -exec ; -execdir x", "operand=6 args=6 exec=5-6"},
	}
	for _, tt := range tests {
		ws := words(strings.Fields(strings.ReplaceAll(tt.line, "'a_b'", "a_b")))
		if got := reading(Read(ws)); got != tt.want {
			t.Errorf("Read(%q)\n got  %q\n want %q", tt.line, got, tt.want)
		}
	}
}

// FuzzRead: any words: the reader ends, and every index it gives is a
// word of the line (or the line's end where the field allows it).
func FuzzRead(f *testing.F) {
	for _, s := range []string{"env A=1 -S x cmd", "sudo -s id", "sh -c - x", "awk p -f q", "su - root -c x", "sg - g t",
		"runuser -u u -- c", "xargs -I % sh -c %", "find . -exec a {} ;", "deno eval x", "trap -- x y", "flock f -w 5 c", "source"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		ws := words(strings.Fields(line))
		if len(ws) == 0 || len(ws) > 64 {
			return
		}
		n := len(ws)
		r := Read(ws)
		for _, i := range []int{r.Cmd, r.Line, r.Code, r.Script} {
			if i < -1 || i > n || i == 0 {
				t.Fatalf("%q: index %d out of the line: %+v", line, i, r)
			}
		}
		for _, i := range []int{r.Operand, r.Rest, r.Args} {
			if i < 1 && n > 1 || i > n {
				t.Fatalf("%q: position %d out of the line: %+v", line, i, r)
			}
		}
		if r.Tail > len(r.Opts) {
			t.Fatalf("%q: tail %d past %d options", line, r.Tail, len(r.Opts))
		}
		for _, e := range r.Exec {
			if e[0] < 1 || e[0] >= e[1] || e[1] > n {
				t.Fatalf("%q: bad -exec range %v", line, e)
			}
		}
	})
}

// TestVerb: one way to pick a verb's grammar. A listed verb has its own;
// a subcommand the table does not list still takes options anywhere
// (Effects reads git whatever --output=F); another program's unlisted
// verb has none (the reader follows nothing after docker ps).
func TestVerb(t *testing.T) {
	for _, tt := range []struct {
		prog, verb string
		want       *Grammar
	}{
		{"docker", "exec", containerExec},
		{"docker", "run", containerRun},
		{"podman", "compose", composeGrammar},
		{"docker", "ps", nil},
		{"kubectl", "exec", kubeExec},
		{"git", "clone", gitClone},
		{"git", "log", gitSubcommands["diff"]},
		{"git", "whatever", anyVerb},
		{"git", "", anyVerb},
		{"ls", "exec", nil},
	} {
		if got := GrammarOf(tt.prog).Verb(tt.verb); got != tt.want {
			t.Errorf("%s %s: got %+v, want %+v", tt.prog, tt.verb, got, tt.want)
		}
	}
}
