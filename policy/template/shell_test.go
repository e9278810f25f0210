package template

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// testArgs is a set of plain argument values for classification tests.
var testArgs = map[string]any{
	"x": "X", "a": "A", "b": "B", "p": "P", "f": "F", "n": 3.0, "dir": "D", "url": "https://example.com",
	"file": "F", "filter": ".a", "record_type": "MX", "domain": "example.com", "secs": "5", "user": "nobody",
	"host": "h", "pat": "*.go", "who": "me",
}

func TestRenderShellModeClassification(t *testing.T) {
	tests := []struct {
		cmd  string
		mode string
	}{
		// One simple command: argv, no shell.
		{"ls -la {{dir}}", ShellModeArgv},
		{"dig +short {{.record_type}} {{.domain}}", ShellModeArgv},
		{"echo {{x}}", ShellModeArgv},
		{"grep -e {{p}} -- {{f}}", ShellModeArgv},
		{"curl -sS --max-time 5 {{url}}", ShellModeArgv},
		{"echo --name={{x}}", ShellModeArgv},
		{`printf '%s\n' {{x}}`, ShellModeArgv},
		{`echo "hello world" {{x}}`, ShellModeArgv},
		{`echo 'a|b;c&d>e<f' {{x}}`, ShellModeArgv},
		{`echo "a;b" {{x}}`, ShellModeArgv},
		{"git -C /repo log --oneline -n {{n}}", ShellModeArgv},
		{`echo a\ b {{x}}`, ShellModeArgv},
		{"jq -r {{filter}} data.json", ShellModeArgv},
		{"echo {{ .x }}", ShellModeArgv},
		{"echo pre{{x}}post", ShellModeArgv},
		{"echo {{a}}{{b}}", ShellModeArgv},
		{`echo "#not a comment" {{x}}`, ShellModeArgv},
		{"echo a#b {{x}}", ShellModeArgv},
		{`echo 'it'"'"'s' {{x}}`, ShellModeArgv},
		{"timeout 5 curl {{url}}", ShellModeArgv},
		{`echo "\"quoted\" \\ \$x" {{x}}`, ShellModeArgv},
		{"echo {{x}}\n", ShellModeArgv},
		{"\n  echo   {{x}}  \n\n", ShellModeArgv},
		{"echo '' {{x}}", ShellModeArgv},
		{"wc -c -- {{file}}", ShellModeArgv},
		{"sh -c 'printf \"%s\\n\" \"$1\"' sh {{x}}", ShellModeArgv},
		{"echo 'multi\nline' {{x}}", ShellModeArgv},
		{"sudo -u {{user}} id", ShellModeArgv},
		// Shell syntax: sh -c.
		{"ls {{dir}} | wc -l", ShellModeShell},
		{"echo {{x}} > out.txt", ShellModeShell},
		{"echo {{x}}; echo done", ShellModeShell},
		{"echo {{x}} && echo ok", ShellModeShell},
		{"echo {{x}} || echo fail", ShellModeShell},
		{"echo {{x}} &", ShellModeShell},
		{"echo $HOME {{x}}", ShellModeShell},
		{"echo ${HOME} {{x}}", ShellModeShell},
		{`echo "$HOME" {{x}}`, ShellModeShell},
		{"echo *.txt {{x}}", ShellModeShell},
		{"echo file?.txt {{x}}", ShellModeShell},
		{"echo [ab] {{x}}", ShellModeShell},
		{"echo {a,b} {{x}}", ShellModeShell},
		{"echo ~ {{x}}", ShellModeShell},
		{"echo {{x}}\necho two", ShellModeShell},
		{"(echo {{x}})", ShellModeShell},
		{"echo {{x}} # comment", ShellModeShell},
		{"X=1 printenv X {{x}}", ShellModeShell},
		{"echo $(date) {{x}}", ShellModeShell},
		{"echo `date` {{x}}", ShellModeShell},
		{"cat <<EOF\nhi\nEOF\necho {{x}}", ShellModeShell},
		{"! grep -q {{p}} file", ShellModeShell},
		{"if true; then echo {{x}}; fi", ShellModeShell},
		{`echo "a\b" {{x}}`, ShellModeShell},
		{"echo a\\\nb {{x}}", ShellModeShell},
		{"echo {{x}} 2>&1", ShellModeShell},
		{"echo {{x}}\r", ShellModeShell},
		{"echo {{x}} |& cat", ShellModeShell},
		{"echo {{x}} < /dev/null", ShellModeShell},
		{"for f in {{x}}; do echo \"$f\"; done", ShellModeShell},
		{"echo $", ShellModeShell},
		{"echo \uE000 {{x}}", ShellModeShell}, // the sentinel rune falls back to sh
	}
	argv, shell := 0, 0
	for _, tt := range tests {
		c, err := CompileShell(tt.cmd)
		if err != nil {
			t.Errorf("CompileShell(%q): %v", tt.cmd, err)
			continue
		}
		if c.Mode() != tt.mode {
			t.Errorf("CompileShell(%q).Mode() = %s, want %s", tt.cmd, c.Mode(), tt.mode)
		}
		r, err := c.Render(testArgs, ShellOptions{})
		if err != nil {
			t.Errorf("Render(%q): %v", tt.cmd, err)
			continue
		}
		if r.Mode != tt.mode || (r.Mode == ShellModeArgv) != (len(r.Argv) > 0) || (r.Mode == ShellModeShell) != (r.Command != "") {
			t.Errorf("Render(%q) = %+v", tt.cmd, r)
		}
		if tt.mode == ShellModeArgv {
			argv++
		} else {
			shell++
		}
	}
	if argv < 20 || shell < 20 {
		t.Fatalf("classification table too small: %d argv, %d shell", argv, shell)
	}
}

func TestRenderShellArgv(t *testing.T) {
	tests := []struct {
		cmd  string
		args map[string]any
		want []string
	}{
		{"echo {{x}}", map[string]any{"x": "a b; c"}, []string{"echo", "a b; c"}},
		{"echo {{x}}", map[string]any{"x": ""}, []string{"echo", ""}},
		{"echo {{x}}", map[string]any{"x": "'\"`$(x)\\\n"}, []string{"echo", "'\"`$(x)\\\n"}},
		{"echo --name={{x}} {{x}}.txt", map[string]any{"x": "v w"}, []string{"echo", "--name=v w", "v w.txt"}},
		{"echo {{a}}{{b}}", map[string]any{"a": "1 ", "b": " 2"}, []string{"echo", "1  2"}},
		{`printf '%s\n' "lit {x}" {{n}}`, map[string]any{"n": 2.5}, []string{"printf", `%s\n`, "lit {x}", "2.5"}},
		{"echo {{n}} {{t}} {{o}}", map[string]any{"n": 1e21, "t": true, "o": map[string]any{"k": []any{1.0}}}, []string{"echo", "1000000000000000000000", "true", `{"k":[1]}`}},
		{"echo {{x}}", map[string]any{"x": "{{.y}}"}, []string{"echo", "{{.y}}"}},
		{"echo {{secret.k}}", nil, []string{"echo", "s3cr3t"}},
	}
	for _, tt := range tests {
		r, err := RenderShell(tt.cmd, tt.args, ShellOptions{Secrets: func(string) (string, error) { return "s3cr3t", nil }})
		if err != nil {
			t.Errorf("RenderShell(%q): %v", tt.cmd, err)
			continue
		}
		if r.Mode != ShellModeArgv || !reflect.DeepEqual(r.Argv, tt.want) {
			t.Errorf("RenderShell(%q) = %+v, want argv %q", tt.cmd, r, tt.want)
		}
	}
}

func TestRenderShellShellMode(t *testing.T) {
	tests := []struct {
		cmd  string
		args map[string]any
		want string
	}{
		{"echo {{x}} | cat", map[string]any{"x": "a b"}, "echo 'a b' | cat"},
		{"echo {{x}} | cat", map[string]any{"x": "it's"}, `echo 'it'\''s' | cat`},
		{"echo {{x}} | cat", map[string]any{"x": ""}, "echo '' | cat"},
		{"echo {{x}} | cat", map[string]any{"x": "'"}, `echo ''\''' | cat`},
		{"echo pre{{x}}post; true", map[string]any{"x": "$(id)"}, "echo pre'$(id)'post; true"},
		{"X={{x}}; echo \"$X\"", map[string]any{"x": "a\nb"}, "X='a\nb'; echo \"$X\""},
		{"echo {{x}} > {{f}}", map[string]any{"x": "1", "f": "out file"}, "echo '1' > 'out file'"},
		{"echo {{x}} | cat", map[string]any{"x": "{{.x}}"}, "echo '{{.x}}' | cat"},
	}
	for _, tt := range tests {
		r, err := RenderShell(tt.cmd, tt.args, ShellOptions{})
		if err != nil {
			t.Errorf("RenderShell(%q): %v", tt.cmd, err)
			continue
		}
		if r.Mode != ShellModeShell || r.Command != tt.want || r.Argv != nil {
			t.Errorf("RenderShell(%q) = %+v, want command %q", tt.cmd, r, tt.want)
		}
	}
}

func TestRenderShellJSON(t *testing.T) {
	a, _ := json.Marshal(&ShellRendering{Mode: ShellModeArgv, Argv: []string{"ls", "x"}})
	s, _ := json.Marshal(&ShellRendering{Mode: ShellModeShell, Command: "ls | wc"})
	if string(a) != `{"mode":"argv","argv":["ls","x"]}` || string(s) != `{"mode":"shell","command":"ls | wc"}` {
		t.Fatalf("JSON shapes: %s %s", a, s)
	}
}

func TestValidateShellTemplateRefuses(t *testing.T) {
	tests := []struct {
		cmd  string
		msg  string // part of the message
		line int
		col  int
	}{
		// Quoting contexts where a single-quoted value is not one word.
		{`echo "{{x}}"`, "inside double quotes", 1, 7},
		{`echo "Hello {{.name}}"`, "inside double quotes", 1, 13},
		{`echo '{{x}}'`, "inside single quotes", 1, 7},
		{`echo 'x {{.y}}'`, "inside single quotes", 1, 9},
		{`echo $({{x}})`, "command substitution", 1, 8},
		{`echo $(echo {{x}})`, "command substitution", 1, 13},
		{"echo `{{x}}`", "`...`", 1, 7},
		{"echo `echo {{x}}`", "`...`", 1, 12},
		{`echo "$(echo {{x}})"`, "command substitution", 1, 14},
		{`echo ${X:-{{y}}}`, "${...}", 1, 11},
		{"cat <<EOF\n{{x}}\nEOF", "here-document", 2, 1},
		{"cat <<'EOF'\nhi {{x}}\nEOF", "here-document", 2, 4},
		{"cat <<-EOF\n\t{{x}}\n\tEOF", "here-document", 2, 2},
		{"cat <<{{x}}\nEOF", "here-document delimiter", 1, 7},
		// dash and busybox read $( in a body across lines, past the first
		// delimiter line; bash does not. Expansions must close on their line.
		{"cat <<EOF\n$(echo \"\nEOF\necho {{x}}\n\")\"\nEOF", "must close on its own line", 2, 1},
		{"cat <<EOF\n`echo\nEOF\necho {{x}}\n`\nEOF", "must close on its own line", 2, 1},
		{"cat <<EOF\n${X:-\nEOF\necho {{x}}\n}\nEOF", "must close on its own line", 2, 1},
		{"cat <<EOF\nbody", "not closed", 1, 7},
		{"cat <<EOF", "no body", 1, 7},
		{"cat <<EOF\na\\\nEOF\nEOF", "line continuation", 2, 1},
		{`echo \{{x}}`, "after a backslash", 1, 7},
		{`echo "\{{x}}"`, "after a backslash", 1, 8},
		{`echo ${{x}}`, `after "$"`, 1, 7},
		{"echo hi # {{x}}", "comment", 1, 11},
		{"# {{x}}\necho hi", "comment", 1, 3},
		{`echo $(( {{x}} + 1 ))`, "arithmetic", 1, 10},
		{`echo $[ {{x}} ]`, "arithmetic", 1, 9},
		{`(( {{x}} > 1 ))`, "arithmetic", 1, 4},
		{`[[ {{x}} == a ]]`, "[[ ... ]]", 1, 4},
		{`[[ -n "$a" && {{x}} ]]`, "[[ ... ]]", 1, 15},
		{"echo $'a' {{x}}", "$'...'", 1, 6},
		{`echo $'\'' {{x}} ''`, "$'...'", 1, 6},
		{`cat <(echo {{x}})`, "command substitution", 1, 12},
		{`echo "$(case a in a) echo;; esac)" {{x}}`, "case inside", 1, 9},
		// Command position.
		{"{{x}}", "command position", 1, 1},
		{"{{x}} --help", "command position", 1, 1},
		{"/usr/bin/{{x}} -v", "command position", 1, 1},
		{"FOO=1 {{x}}", "command position", 1, 7},
		{"2>/dev/null {{x}}", "command position", 1, 13},
		{"echo a | {{x}}", "command position", 1, 10},
		{"if {{x}}; then echo; fi", "command position", 1, 4},
		{"env {{x}}", "command position", 1, 5},
		{"env A=1 -u B {{x}} arg", "command position", 1, 14},
		{"sudo -u root {{x}}", "command position", 1, 14},
		{"sudo -- {{x}}", "command position", 1, 9},
		{"timeout 5 {{x}}", "command position", 1, 11},
		{"timeout -s KILL 5 {{x}}", "command position", 1, 19},
		{"nice -n 5 {{x}}", "command position", 1, 11},
		{"xargs -n 1 {{x}}", "command position", 1, 12},
		{"exec {{x}}", "command position", 1, 6},
		{"command {{x}}", "command position", 1, 9},
		{"busybox {{x}} a", "command position", 1, 9},
		{"git {{x}} status", "command position", 1, 5},
		{`find . -name '*.go' -exec {{x}} {} +`, "command position", 1, 27},
		{`find . -execdir sh -c {{x}} \;`, "code", 1, 23},
		{"$CMD {{x}}", "chosen when the command runs", 1, 6},
		{"${TOOL:-ls} {{x}}", "chosen when the command runs", 1, 13},
		{"/bin/s? -c {{x}}", "chosen when the command runs", 1, 12},
		// Code.
		{"eval {{x}}", "evaluates its arguments", 1, 6},
		{`eval "$X"; echo {{y}}`, "evaluates its arguments", 1, 6},
		{"trap {{x}} EXIT", "evaluates its arguments", 1, 6},
		{"sh -c {{x}}", "code", 1, 7},
		{"bash -lc {{x}}", "code", 1, 10},
		{"bash -o posix -c {{x}} arg0", "code", 1, 18},
		{"sh {{x}}", "script it runs", 1, 4},
		{"/usr/bin/python3 -c {{x}}", "code", 1, 21},
		{"python3.12 -c {{x}}", "code", 1, 15},
		{"python3 -m {{x}}", "code", 1, 12},
		{"python3 {{x}} arg", "script it runs", 1, 9},
		{"perl -e {{x}}", "code", 1, 9},
		{"perl -ne {{x}} file", "code", 1, 10},
		{"ruby -e {{x}}", "code", 1, 9},
		{"node --eval {{x}}", "code", 1, 13},
		{"node -e {{x}}", "code", 1, 9},
		{"php -r {{x}}", "code", 1, 8},
		{"awk {{x}} file", "code", 1, 5},
		{"awk -F: {{x}} file", "code", 1, 9},
		{"gawk --source {{x}}", "code", 1, 15},
		{"sed {{x}} file", "code", 1, 5},
		{"sed -n -e {{x}} file", "code", 1, 11},
		{"sed --expression {{x}}", "code", 1, 18},
		{"env -S {{x}}", "code", 1, 8},
		{"git -c {{x}} log", "code", 1, 8},
		{"ssh host ls {{x}}", "command line", 1, 13},
		{"ssh -o {{x}} host", "code", 1, 8},
		{"su -c {{x}} root", "code", 1, 7},
		{"su root -c {{x}}", "command line", 1, 12},
		{"watch {{x}}", "command line", 1, 7},
		{"flock /tmp/l {{x}}", "command line", 1, 14},
		{"rsync -e {{x}} a b", "code", 1, 10},
		{"tar --to-command {{x}} -xf a.tar", "code", 1, 18},
		{"source {{x}}", "script", 1, 8},
		{". {{x}}", "script", 1, 3},
		// Values reaching code through standard input or xargs.
		{"echo {{x}} | sh", "standard input", 1, 14},
		{"echo {{x}} | bash -s arg", "standard input", 1, 14},
		{"printf %s {{x}} | python3", "standard input", 1, 19},
		{"printf %s {{x}} | python3 -", "script it runs", 1, 27},
		{"source /dev/stdin <<< {{x}}", "script", 1, 8},
		{"sh /dev/stdin <<< {{x}}", "script it runs", 1, 4},
		{`X={{x}}; bash <(printf %s "$X")`, "script it runs", 1, 15},
		{"echo {{x}} | awk -f -", "program it runs", 1, 21},
		{"echo {{x}} | xargs sh -c", "code", 1, 14},
		{"echo {{x}} | xargs -n1 sh", "script it runs", 1, 14},
		{"echo {{x}} | xargs -I{} sh -c {}", "code", 1, 31},
		{"echo {{x}} | xargs -I % sh -c 'echo %'", "code", 1, 31},
		{"echo {{x}} | xargs env", "filled in from data", 1, 14},
		{"echo {{x}} | xargs -I% % arg", "filled in from data", 1, 24},
		{`find . -exec sh -c {} \; ; echo {{x}}`, "code", 1, 20},
		// Variable names, which bash evaluates.
		{"read {{x}}", "variable names", 1, 6},
		{"read -r {{x}} < f", "variable names", 1, 9},
		{"read -a {{x}}", "code", 1, 9},
		{"unset {{x}}", "variable names", 1, 7},
		{"mapfile -C {{x}} arr < f", "variable names", 1, 12},
		{"printf -v {{x}} %s 1", "variable name", 1, 11},
		{"[ -v {{x}} ]", "variable name", 1, 6},
		{"test -R {{x}}", "variable name", 1, 9},
		{"export {{x}}", "variable names", 1, 8},
		{"export {{x}}=1", "variable names", 1, 8},
		// Environment variables that name code.
		{"PATH={{x}} ls", "may not set PATH", 1, 1},
		{"GIT_SSH_COMMAND={{x}} git fetch", "may not set GIT_SSH_COMMAND", 1, 1},
		{"env LD_PRELOAD={{x}} ls", "may not set LD_PRELOAD", 1, 5},
		{"sudo PYTHONPATH=/x:{{x}} python3 s.py", "may not set PYTHONPATH", 1, 6},
		{"export BASH_ENV={{x}}; bash s.sh", "may not set BASH_ENV", 1, 8},
		{"NODE_OPTIONS={{x}}; node a.js", "may not set NODE_OPTIONS", 1, 1},
		{"hash -p {{x}} ls", "evaluates its arguments", 1, 9},
		// Bash arithmetic anywhere in a template with arguments.
		{"n={{x}}; echo $((n + 1))", "arithmetic", 1, 15},
		{"echo {{x}}; let n=n+1", "let", 1, 13},
		{"declare -i n; n={{x}}", "declare", 1, 1},
		{"local -n r=x; echo {{x}}", "local -n", 1, 7},
		{"a[{{x}}]=1", "array", 1, 1},
		{"a[$i]=1; echo {{x}}", "array", 1, 1},
		{"a=([{{x}}]=1)", "array", 1, 3},
		{"echo ${s:$n} {{x}}", "substring", 1, 9},
		{"echo ${a[$n]} {{x}}", "subscript", 1, 9},
		{"[[ $n -gt 1 ]] && echo {{x}}", "arithmetic comparison", 1, 7},
		{"for ((i=0;i<3;i++)); do echo {{x}}; done", "arithmetic", 1, 5},
		// Definitions that give arguments any meaning.
		{`f() { "$@"; }; f sh -c {{x}}`, "function definition", 1, 2},
		{`function f { "$@"; }; f {{x}}`, "function definition", 1, 1},
		{"alias e=eval; e {{x}}", "alias", 1, 1},
		// Syntax.
		{`echo "unterminated {{x}}`, "inside double quotes", 1, 20},
		{`echo "unterminated`, "unterminated double quote", 1, 6},
		{`echo 'unterminated`, "unterminated single quote", 1, 6},
		{"echo $(unterminated", "unterminated $(", 1, 6},
		{"echo `unterminated", "unterminated `", 1, 6},
		{"echo ${unterminated", "unterminated ${", 1, 6},
		{`echo trailing\`, "backslash at the end", 1, 14},
		{"echo {{bad name}}", "bad placeholder", 1, 6},
		{"echo {{x", "not closed", 1, 6},
		{"", "empty", 1, 1},
		{"  \n\t ", "empty", 1, 1},
		{"echo a\x00b", "NUL", 1, 7},
		{"echo \xff {{x}}", "UTF-8", 1, 6},
		{"echo >", "without a target", 1, 7},
		{`echo ${x:-"a"} {{y}}`, "not supported", 1, 11},
		{strings.Repeat("$(", 40) + "x" + strings.Repeat(")", 40), "nest more than", 1, 65},
	}
	for _, tt := range tests {
		err := ValidateShell(tt.cmd)
		var te *Error
		if !errors.As(err, &te) {
			t.Errorf("ValidateShellTemplate(%q) = %v, want a *TemplateError", tt.cmd, err)
			continue
		}
		if !strings.Contains(te.Msg, tt.msg) || te.Line != tt.line || te.Column != tt.col {
			t.Errorf("ValidateShellTemplate(%q) = line %d col %d %q;\n\twant line %d col %d containing %q", tt.cmd, te.Line, te.Column, te.Msg, tt.line, tt.col, tt.msg)
		}
		if _, err := RenderShell(tt.cmd, testArgs, ShellOptions{}); err == nil {
			t.Errorf("RenderShell(%q) rendered a refused template", tt.cmd)
		}
	}
}

func TestValidateShellTemplateAccepts(t *testing.T) {
	for _, cmd := range []string{
		`sh -c 'printf "%s\n" "$1"' sh {{x}}`,
		`bash -c 'echo "$@"' bash {{a}} {{b}}`,
		"python3 script.py {{x}}",
		"python3 -c 'import sys; print(sys.argv[1])' {{x}}",
		"perl -e 'print $ARGV[0]' {{x}}",
		`awk -F: '{print $1}' {{file}}`,
		`awk -v pat={{p}} '$0 ~ pat' {{file}}`,
		`sed -e 's/a/b/' {{file}}`,
		`sed 's/a/b/' {{file}}`,
		"find {{dir}} -name '*.go'",
		`find . -name {{pat}} -exec grep -l foo {} +`,
		"env FOO={{x}} printenv FOO",
		"sudo -u {{user}} id",
		"timeout {{secs}} sleep 1",
		"ssh {{host}} uptime",
		"export X={{x}}; printenv X",
		`read -r line <<< {{x}}; printf '%s\n' "$line"`,
		`printf '%s\n' {{x}}`,
		"test -n {{x}}",
		"[ {{x}} = yes ] && echo yes",
		"git log --author={{who}}",
		"git -C {{dir}} status",
		"xargs -n1 echo {{x}}",
		"echo {{x}} | xargs -I{} echo {}",
		`echo {{x}} | xargs sh -c 'echo "$@"' _`,
		"sh script.sh < {{file}}",
		`python3 "$HOME/tool.py" {{x}}`,
		`find . -name '*.txt' -exec sh -c 'cat "$1"' _ {} \; ; echo {{x}}`,
		"echo {{x}} | awk '{print $1}'",
		"echo {{x}} | xargs echo",
		"cat <<EOF; echo {{x}}\nbody $HOME\nEOF\necho after {{x}}",
		"cat <<'EOF' && echo {{x}}\nbody\nEOF",
		"cat <<EOF\n$(date) ${HOME} `id -u` \\$(not)\nEOF\necho {{x}}",
		"cat <<'EOF'\n$(echo \"\nEOF\necho {{x}}",
		"echo {{x}} # note",
		"X={{x}} env",
		"GOAL={{x}} make",
		"PATH=/usr/bin:$PATH ls {{x}}",
		"echo $((1 + 2))",
		`eval "$(ssh-agent -s)"`, // no arguments: the expansion cannot hold one
		"echo ${HOME:-/root} {{x}}",
		"echo ${#HOME} {{x}}",
		"case {{x}} in a) echo a;; *) echo other;; esac",
		"for w in {{x}}; do echo \"$w\"; done",
		"if [ -n {{x}} ]; then echo set; fi",
		"while read -r l; do echo \"$l\"; done < {{file}}",
		"grep -c {{p}} {{file}} 2>/dev/null || true",
		"echo {{secret.token}} | wc -c",
		"curl -H {{header}} https://example.com",
		"echo a{{x}}b'c'\"d\"",
		"echo {{x}}}}",
		"printf %s {{x}} >&2",
		"cd /tmp && ls -- {{x}}",
		"echo {{x}} | tee -a {{file}}",
		"echo {{x}}\n\necho {{y}}\n",
		"(cd /tmp; ls {{x}})",
		"{ echo {{x}}; echo b; }",
		"command -v ls && echo {{x}}",
		"exec ls {{x}}",
		"time ls {{x}}",
	} {
		if err := ValidateShell(cmd); err != nil {
			t.Errorf("ValidateShellTemplate(%q): %v", cmd, err)
		}
	}
}

func TestRenderShellOptionInjection(t *testing.T) {
	tests := []struct {
		cmd   string
		args  map[string]any
		allow map[string]bool
		bad   string // the refused argument, or "" for allowed
	}{
		{"curl {{url}}", map[string]any{"url": "--upload-file=/etc/passwd"}, nil, "url"},
		{"curl {{url}}", map[string]any{"url": "-o/tmp/x"}, nil, "url"},
		{"curl {{url}}", map[string]any{"url": "https://example.com/-x"}, nil, ""},
		{"grep -e {{p}} -- {{f}}", map[string]any{"p": "-v", "f": "x"}, nil, "p"},
		{"grep -e {{p}} -- {{f}}", map[string]any{"p": "x", "f": "-rf"}, nil, ""},
		{"grep -e {{p}} -- {{f}}", map[string]any{"p": "-v", "f": "x"}, map[string]bool{"p": true}, ""},
		{"rm -- {{f}}", map[string]any{"f": "-rf"}, nil, ""},
		{"rm '--' {{f}}", map[string]any{"f": "-rf"}, nil, ""},
		{"rm {{f}} --", map[string]any{"f": "-rf"}, nil, "f"},
		{"ls {{a}}{{b}}", map[string]any{"a": "", "b": "-la"}, nil, "b"},
		{"ls {{a}}{{b}}", map[string]any{"a": "x", "b": "-la"}, nil, ""},
		{"ls ''{{a}}", map[string]any{"a": "-la"}, nil, "a"},
		{`ls ""{{a}}`, map[string]any{"a": "-la"}, nil, "a"},
		{"ls x{{a}}", map[string]any{"a": "-la"}, nil, ""},
		{"ls --color={{a}}", map[string]any{"a": "-never"}, nil, ""},
		{"ls {{a}}.txt", map[string]any{"a": "-R"}, nil, "a"},
		{"find . -name {{p}}", map[string]any{"p": "-delete"}, nil, "p"},
		{"git log {{rev}}", map[string]any{"rev": "--output=/tmp/pwned"}, nil, "rev"},
		{"printf %d {{n}}", map[string]any{"n": -5.0}, nil, "n"},
		{"printf %d {{n}}", map[string]any{"n": -5.0}, map[string]bool{"n": true}, ""},
		{"tar xf {{f}}", map[string]any{"f": "--checkpoint-action=exec=sh"}, nil, "f"},
		{"ssh {{host}} uptime", map[string]any{"host": "-oProxyCommand=touch /tmp/x"}, nil, "host"},
		// bash brace expansion can make a value start a word.
		{"rm {,{{f}}} | cat", map[string]any{"f": "-rf"}, nil, "f"},
		{"rm x{a,b}{{f}} | cat", map[string]any{"f": "-rf"}, nil, "f"},
		// curl reads a file for @ and < at the start of a value, or after "=".
		{"curl -d {{d}} https://x.example", map[string]any{"d": "@/etc/passwd"}, nil, "d"},
		{"curl --data-binary {{d}} https://x.example", map[string]any{"d": "</etc/passwd"}, nil, "d"},
		{"curl -F file={{d}} https://x.example", map[string]any{"d": "@/etc/passwd"}, nil, "d"},
		{"timeout 9 curl -H {{d}} https://x.example", map[string]any{"d": "@/etc/hosts"}, nil, "d"},
		{"curl -d {{d}} https://x.example", map[string]any{"d": "a=@b"}, nil, ""},
		{"curl https://x.example/{{d}}", map[string]any{"d": "@x"}, nil, ""},
		// Shell mode: the same rule on words; "--" holds for its own command only.
		{"ls {{a}} | wc -l", map[string]any{"a": "-la"}, nil, "a"},
		{"ls -- {{a}} | wc -l", map[string]any{"a": "-la"}, nil, ""},
		{"ls -- a | wc {{b}}", map[string]any{"b": "-l"}, nil, "b"},
		{"sudo -- ls {{a}}", map[string]any{"a": "-la"}, nil, "a"},
		{"env -- ls {{a}}", map[string]any{"a": "-la"}, nil, "a"},
		{"timeout -- 5 ls {{a}}", map[string]any{"a": "-la"}, nil, "a"},
		{"echo x > {{f}}; cat -- {{f}}", map[string]any{"f": "-x"}, nil, ""},
		{"X={{a}} env", map[string]any{"a": "-x"}, nil, ""},
		{"echo {{secret.k}} | cat", nil, nil, ""},
	}
	for _, tt := range tests {
		_, err := RenderShell(tt.cmd, tt.args, ShellOptions{AllowDash: tt.allow, Secrets: func(string) (string, error) { return "-secret", nil }})
		var ae *ArgumentError
		switch {
		case tt.bad == "" && err != nil:
			t.Errorf("RenderShell(%q, %v): %v", tt.cmd, tt.args, err)
		case tt.bad != "" && (!errors.As(err, &ae) || ae.Name != tt.bad || !strings.Contains(ae.Msg, "option") && !strings.Contains(ae.Msg, "file")):
			t.Errorf("RenderShell(%q, %v) = %v, want an option refusal for %q", tt.cmd, tt.args, err, tt.bad)
		}
	}
}

func TestRenderShellArgumentErrors(t *testing.T) {
	_, err := RenderShell("echo {{x}} {{y}}", map[string]any{"x": "1"}, ShellOptions{})
	var me *MissingArgumentError
	if !errors.As(err, &me) || me.Name != "y" {
		t.Errorf("missing y: %v", err)
	}
	_, err = RenderShell("echo {{x}}", map[string]any{"x": "a\x00b"}, ShellOptions{})
	var ae *ArgumentError
	if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "NUL") {
		t.Errorf("NUL: %v", err)
	}
	_, err = RenderShell("echo {{secret.k}}", nil, ShellOptions{})
	if !errors.Is(err, ErrSecretsUnavailable) {
		t.Errorf("no secrets: %v", err)
	}
	_, err = RenderShell("echo {{x}}", map[string]any{"x": []any{func() {}}}, ShellOptions{})
	if !errors.As(err, &ae) {
		t.Errorf("unencodable value: %v", err)
	}
}

func TestRenderShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":       "''",
		"a":      "'a'",
		"a b":    "'a b'",
		"'":      `''\'''`,
		"it's":   `'it'\''s'`,
		"\n$`\\": "'\n$`\\'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %q, want %q", in, got, want)
		}
		words, err := testUnquote(ShellQuote(in))
		if err != nil || len(words) != 1 || words[0] != in {
			t.Errorf("unquote(ShellQuote(%q)) = %q, %v", in, words, err)
		}
	}
}

// testUnquote splits text into words the way sh does for the subset the
// renderer produces: blanks separate words; '…' quotes; \x escapes; "…"
// quotes with \ escaping $ ` " \. Anything else special is an error.
func testUnquote(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated '")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("trailing backslash")
			}
			cur.WriteByte(s[i+1])
			i++
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
					i++
				} else if s[i] == '$' || s[i] == '`' {
					return nil, errors.New("expansion inside double quotes")
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New(`unterminated "`)
			}
			in = true
		case strings.IndexByte("|&;<>()$`*?[#~{}", c) >= 0:
			return nil, errors.New("shell syntax " + string(c))
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// TestShellTemplateTreeReadings pins what the check on mvdan.cc/sh's tree
// decided where the hand-written lexer read a template differently
// (found by a differential run over the deny and template test tables).
func TestShellTemplateTreeReadings(t *testing.T) {
	for _, tt := range []struct {
		cmd, msg string // "-": accepted in shell mode; otherwise refused with msg in the message
	}{
		// A carriage return is a word character to sh and bash.
		{"a\rb{{x}}", "command position"},
		// Loop and coprocess names are variable names.
		{"for {{x}} in a b; do echo; done", "variable name"},
		{"coproc {{x}} { b; }", "variable name"},
		// Text bash refuses is refused, however dash reads it.
		{"((echo; rm {{x}} /))", ""},
		{"[[ $(id) {{x}}", ""},
		{"echo {{x}} )", ""},
		{"echo ${a[$(id)]} {{x}}", "$(...) inside ${...}"},
		// Bash reads a quote inside "${x:-'}", dash does not.
		{`echo "${x:-'}" {{y}}`, ""},
		{`echo "${x:-'}" {{y}} '}"`, "inside ${...}"},
		// The lexer refused these; they are plain shell.
		{"echo hi > >(cat) {{x}}", "-"},
		// Left to the shell, not split into an argv.
		{"find . -exec a {{x}} ;", "-"},
		{"a \\\n  b {{x}}", "-"},
	} {
		c, err := CompileShell(tt.cmd)
		if tt.msg == "-" {
			if err != nil || c.Mode() != ShellModeShell {
				t.Errorf("CompileShell(%q) = %v, want accepted in shell mode", tt.cmd, err)
			}
			continue
		}
		var te *Error
		if !errors.As(err, &te) || !strings.Contains(te.Msg, tt.msg) {
			t.Errorf("CompileShell(%q) = %v, want refused (%q)", tt.cmd, err, tt.msg)
		}
	}
}
