package template

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// testNasty try to break out of the rendering; any that ran would
// create the file CANARY in the working directory.
var testNasty = []string{
	"; touch CANARY",
	"$(touch CANARY)",
	"`touch CANARY`",
	"' ; touch CANARY; '",
	"'; touch CANARY; echo '",
	`"; touch CANARY; echo "`,
	"a\ntouch CANARY",
	"a\r\ntouch CANARY\r\n",
	"$IFS;touch${IFS}CANARY",
	"${IFS}touch${IFS}CANARY;",
	"&& touch CANARY",
	"| touch CANARY",
	"|| touch CANARY #",
	"> CANARY",
	"< /dev/null; touch CANARY",
	`\'; touch CANARY #`,
	`\`,
	`'\''`,
	"\u2019; touch CANARY; \u2018", // curly quotes
	"\uff02; touch CANARY; \uff07", // fullwidth quotes
	"a[$(touch CANARY)]",           // bash arithmetic
	"$'\\x27'; touch CANARY",       // ANSI-C quoting
	"\nEOF\ntouch CANARY\nEOF\n",   // here-document terminator
	"x\n# ; touch CANARY",          // comment
	"*", "~", "{a,b}", "$HOME", "!!",
	"\t\v\f",
	"$((1+$(touch CANARY)))",
	"';exec touch CANARY;'",
	"\x1b]0;touch CANARY\x07",
	"\x01; touch CANARY", "\x7f; touch CANARY", "\x01\x7f'\x01; touch CANARY #",
}

// testExecTemplates render one value x; want is what stdout must be.
var testExecTemplates = []struct {
	cmd  string
	mode string
	want func(x string) string
}{
	{`printf '%s\n' {{x}}`, ShellModeArgv, func(x string) string { return x + "\n" }},
	{`printf '[%s]\n' --flag={{x}}`, ShellModeArgv, func(x string) string { return "[--flag=" + x + "]\n" }},
	{`printf '%s|%s\n' pre{{x}}post {{x}}`, ShellModeArgv, func(x string) string { return "pre" + x + "post|" + x + "\n" }},
	{`sh -c 'printf "%s\n" "$1"' sh {{x}}`, ShellModeArgv, func(x string) string { return x + "\n" }},
	{`printf '%s\n' {{x}} | cat`, ShellModeShell, func(x string) string { return x + "\n" }},
	{`printf '%s\n' {{x}}; true`, ShellModeShell, func(x string) string { return x + "\n" }},
	{`X={{x}}; printf '%s\n' "$X"`, ShellModeShell, func(x string) string { return x + "\n" }},
	{`X={{x}} sh -c 'printf "%s\n" "$X"'`, ShellModeShell, func(x string) string { return x + "\n" }},
	{"cat <<EOF; printf '%s\\n' {{x}}\nbody\nEOF", ShellModeShell, func(x string) string { return "body\n" + x + "\n" }},
	{"if true; then printf '%s\\n' {{x}}; fi", ShellModeShell, func(x string) string { return x + "\n" }},
	{`printf '%s\n' pre{{x}}post | cat`, ShellModeShell, func(x string) string { return "pre" + x + "post\n" }},
	{`for a in {{x}}; do printf '%s\n' "$a"; done`, ShellModeShell, func(x string) string { return x + "\n" }},
	{`case {{x}} in *) printf '%s\n' ok;; esac`, ShellModeShell, func(string) string { return "ok\n" }},
	{`printf '%s\n' {{x}} 2>/dev/null`, ShellModeShell, func(x string) string { return x + "\n" }},
	{`printf '%s' {{x}} > out.txt && cat out.txt`, ShellModeShell, func(x string) string { return x }},
	{`printf '%s\n' {{x}} # trailing comment`, ShellModeShell, func(x string) string { return x + "\n" }},
	{"(printf '%s\\n' {{x}})", ShellModeShell, func(x string) string { return x + "\n" }},
	{`{ printf '%s\n' {{x}}; }`, ShellModeShell, func(x string) string { return x + "\n" }},
	{`printf '%s\n' {{x}} | xargs -0 printf '%s'`, ShellModeShell, func(x string) string { return x + "\n" }},
	{"read -r l <<EOF\nline\nEOF\nprintf '%s\\n' {{x}}", ShellModeShell, func(x string) string { return x + "\n" }},
}

// testShells are the shells a sh -c rendering is run with, when installed.
func testShells(t *testing.T) [][]string {
	var shells [][]string
	for _, s := range [][]string{{"sh"}, {"dash"}, {"bash"}, {"busybox", "sh"}, {"zsh"}, {"mksh"}, {"ksh"}} {
		if _, err := exec.LookPath(s[0]); err == nil {
			shells = append(shells, s)
		}
	}
	if len(shells) == 0 {
		t.Skip("no shell installed")
	}
	return shells
}

// TestInjectedArgumentNeverExecutes renders nasty values through both modes
// and really runs the result: argv through exec, sh -c text through every
// installed shell. No run may create the canary file, and each must print
// exactly the value.
func TestInjectedArgumentNeverExecutes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs a POSIX shell")
	}
	if testing.Short() {
		t.Skip("runs thousands of processes")
	}
	if _, err := exec.LookPath("printf"); err != nil {
		t.Skip("no printf binary")
	}
	shells := testShells(t)
	dir := t.TempDir()
	canary := filepath.Join(dir, "CANARY")
	runs := 0
	for _, tmpl := range testExecTemplates {
		c, err := CompileShell(tmpl.cmd)
		if err != nil {
			t.Fatalf("CompileShell(%q): %v", tmpl.cmd, err)
		}
		if c.Mode() != tmpl.mode {
			t.Fatalf("CompileShell(%q).Mode() = %s, want %s", tmpl.cmd, c.Mode(), tmpl.mode)
		}
		for _, v := range testNasty {
			r, err := c.Render(map[string]any{"x": v}, ShellOptions{})
			if err != nil {
				t.Fatalf("Render(%q, %q): %v", tmpl.cmd, v, err)
			}
			var cmds [][]string
			if r.Mode == ShellModeArgv {
				cmds = append(cmds, r.Argv)
			} else {
				for _, sh := range shells {
					// Shells differ in how printf handles odd bytes
					// but not in what they run; zsh's sh emulation is
					// only checked for the canary.
					cmds = append(cmds, append(append([]string(nil), sh...), "-c", r.Command))
				}
			}
			for _, argv := range cmds {
				out := testRun(t, dir, argv)
				runs++
				if _, err := os.Stat(canary); err == nil {
					t.Fatalf("CANARY created: template %q, value %q, argv %q", tmpl.cmd, v, argv)
				}
				if want := tmpl.want(v); out != want && !strings.Contains(argv[0], "zsh") {
					t.Errorf("template %q, value %q, run %q:\n\tgot  %q\n\twant %q", tmpl.cmd, v, argv, out, want)
				}
				_ = os.Remove(filepath.Join(dir, "out.txt"))
			}
		}
	}
	t.Logf("%d runs, no canary", runs)
}

func testRun(t *testing.T, dir string, argv []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LC_ALL=C"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run %q: %v", argv, err)
		}
		t.Errorf("run %q: %v; stderr %q", argv, err, stderr.String())
	}
	return stdout.String()
}

// TestRefusedValuesNeverRun checks that values the option rule refuses
// never reach a process: rendering fails, so there is nothing to run.
func TestRefusedValuesNeverRun(t *testing.T) {
	for _, cmd := range []string{"curl {{x}}", "ls {{x}} | wc -l", "find . -name {{x}}"} {
		for _, v := range []string{"--upload-file=/etc/passwd", "-exec", "-", "--", "-oProxyCommand=touch CANARY"} {
			r, err := RenderShell(cmd, map[string]any{"x": v}, ShellOptions{})
			var ae *ArgumentError
			if !errors.As(err, &ae) || r != nil {
				t.Errorf("RenderShell(%q, %q) = %+v, %v; want a refusal", cmd, v, r, err)
			}
		}
	}
}
