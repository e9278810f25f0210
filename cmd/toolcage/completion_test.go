package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompletionBash sources 'toolcage completion bash' in a real bash and
// completes half-typed command lines through the binary itself.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed for this test: ", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "toolcage")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		words []string // the last one is being typed
		want  string   // COMPREPLY, one per line
	}{
		{[]string{"toolcage", "to"}, "tools\n"},
		{[]string{"toolcage", "tools", "hi"}, "history\n"},
		{[]string{"toolcage", "tools", "list", "--form"}, "--format\n"},
		{[]string{"toolcage", "comp"}, "completion\n"},
		{[]string{"toolcage", "--js"}, "--json\n"},
	}
	for _, tt := range tests {
		// The words travel as positional parameters, never as script text.
		script := `source <(toolcage completion bash) || exit 9
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _toolcage
for w in "${COMPREPLY[@]}"; do printf '%s\n' "$w"; done`
		cmd := exec.Command(bash, append([]string{"--noprofile", "--norc", "-c", script, "bash"}, tt.words...)...)
		cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin", asCLIEnv+"=1")
		out, err := cmd.Output()
		if err != nil || string(out) != tt.want {
			t.Errorf("%q: %q, %v; want %q", tt.words, out, err, tt.want)
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, tt := range []struct {
		shell string
		want  []string
	}{
		{"bash", []string{"complete -o bashdefault -o default -F _toolcage toolcage", "--generate-bash-completion"}},
		{"zsh", []string{"#compdef toolcage\n", "compdef _toolcage toolcage", "--generate-bash-completion"}},
		{"fish", []string{"complete -c toolcage ", "__fish_seen_subcommand_from tools", "-a 'list ls'", "-l format"}},
	} {
		r := runCLI(t, "", "completion", tt.shell)
		if r.code != exitOK || r.err != "" {
			t.Errorf("%s: %v", tt.shell, r)
		}
		for _, w := range tt.want {
			if !strings.Contains(r.out, w) {
				t.Errorf("%s script lacks %q", tt.shell, w)
			}
		}
	}
	bash, _ := exec.LookPath("bash")
	script := runCLI(t, "", "completion", "bash").out
	if out, err := exec.Command(bash, "-n", "-c", script).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v: %s", err, out)
	}
	wantExit(t, runCLI(t, "", "completion", "powershell"), exitUsage, `unknown shell "powershell"`)
	wantExit(t, runCLI(t, "", "completion"), exitUsage, "want one shell")
}

// TestManPage: 'toolcage man' (what 'make man' writes to docs/man) is a
// section 1 roff page naming every verb.
func TestManPage(t *testing.T) {
	r := runCLI(t, "", "man")
	if r.code != exitOK || r.err != "" || !strings.HasPrefix(r.out, ".nh\n.TH toolcage 1") {
		t.Fatalf("man: %.300s", r)
	}
	for _, c := range newCLI(&app{}).Commands {
		if !c.Hidden && !strings.Contains(r.out, "\n.SH "+c.Name+"\n") {
			t.Errorf("man page lacks %s", c.Name)
		}
	}
	for _, w := range []string{".SH NAME", ".SH SYNOPSIS", ".SH COMMANDS", "tools", "create", "--format"} {
		if !strings.Contains(r.out, w) {
			t.Errorf("man page lacks %q", w)
		}
	}
}
