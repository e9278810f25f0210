package template

import (
	"os"
	"testing"

	"github.com/toolcage/toolcage/policy/shellguard"
)

// TestArgumentInjection runs the red-team corpus testdata/templates/
// injection.txt: each value is refused when the tool is made (create), when
// it is rendered (render) or by the default deny rules on the rendered
// command (deny), or passes (allow); refuse accepts any of the three.
func TestArgumentInjection(t *testing.T) {
	data, err := os.ReadFile("../../configs/shell_rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := shellguard.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	cases := readTemplateCases(t, "injection.txt", 3)
	for _, c := range cases {
		want, tmpl, val := c.fields[0], c.fields[1], c.fields[2]
		got, why := injectionVerdict(rules, tmpl, val)
		if got != "allow" {
			refused++
		}
		if got != want && (want != "refuse" || got == "allow") {
			t.Errorf("injection.txt:%d: %q with v=%q: %s (%v), want %s", c.line, tmpl, val, got, why, want)
		}
	}
	t.Logf("injection corpus: %d cases, %d refused", len(cases), refused)
}

// TestOperandForms runs testdata/templates/operands.txt (issue 22): values
// a program reads as an option or a target without a leading "-" (dig's
// @server and +option, rsync's host:path, make's VAR=value), and commands
// run in containers, pods and hosts.
func TestOperandForms(t *testing.T) {
	data, err := os.ReadFile("../../configs/shell_rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := shellguard.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range readTemplateCases(t, "operands.txt", 3) {
		want, tmpl, val := c.fields[0], c.fields[1], c.fields[2]
		got, why := injectionVerdict(rules, tmpl, val)
		if got != want && (want != "refuse" || got == "allow") {
			t.Errorf("operands.txt:%d: %q with v=%q: %s (%v), want %s", c.line, tmpl, val, got, why, want)
		}
	}
}

// injectionVerdict is what the daemon would do with the template and one
// argument: refuse the tool, refuse the argument, refuse the rendered
// command, or run it.
func injectionVerdict(rules *shellguard.Rules, tmpl, val string) (string, error) {
	cs, err := CompileShell(tmpl)
	if err != nil {
		return "create", err
	}
	r, err := cs.Render(map[string]any{"v": val}, ShellOptions{})
	if err != nil {
		return "render", err
	}
	if r.Mode == ShellModeArgv {
		err = rules.CheckArgv(r.Argv)
	} else {
		err = rules.CheckCommand(r.Command)
	}
	if err != nil {
		return "deny", err
	}
	return "allow", nil
}
