package template

import (
	"os"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/policy/shellguard"
	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// templateCase is one line of a testdata/templates file: fields split by
// " ::: ".
type templateCase struct {
	line   int
	fields []string
}

func readTemplateCases(t *testing.T, name string, nfields int) []templateCase {
	t.Helper()
	data, err := os.ReadFile("testdata/templates/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out []templateCase
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, " ::: ")
		if len(f) != nfields {
			t.Fatalf("%s:%d: want %d fields split by \" ::: \", got %q", name, i+1, nfields, line)
		}
		out = append(out, templateCase{line: i + 1, fields: f})
	}
	if len(out) < 20 {
		t.Fatalf("%s: only %d cases", name, len(out))
	}
	return out
}

// TestShellEnv: arguments may not set variables that programs run or
// that change how they run; fixed values of variables that run are
// checked like commands.
func TestShellEnv(t *testing.T) {
	data, err := os.ReadFile("../../configs/shell_rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := shellguard.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range readTemplateCases(t, "env.txt", 3) {
		want, name, value := c.fields[0], c.fields[1], c.fields[2]
		got := "allow"
		if err := ValidateShellEnv(name, value); err != nil {
			got = "create"
		} else if shellsyntax.EnvRuns(name) {
			if err := rules.CheckCommand(shellsyntax.EnvCommand(name, value)); err != nil {
				got = "command"
			}
		}
		if got != want {
			t.Errorf("env.txt:%d: %s=%q: %s, want %s", c.line, name, value, got, want)
		}
	}
}

// FuzzShellEnv checks that the env checks never panic, and that a
// variable refused for an argument stays refused however the value
// around the placeholder is written.
func FuzzShellEnv(f *testing.F) {
	f.Add("GIT_SSH_COMMAND", "{{.x}}")
	f.Add("BASH_FUNC_ls%%", "() { {{.x}}; }")
	f.Add("LESSOPEN", "| cat %s")
	f.Add("GREETING", "hi {{.x}}")
	f.Add("X", "{{")
	f.Fuzz(func(t *testing.T, name, value string) {
		err := ValidateShellEnv(name, value)
		_ = shellsyntax.EnvRuns(name)
		_ = shellsyntax.EnvCommand(name, value)
		if err == nil && CodeEnv(name) && !strings.ContainsAny(name, "=\x00") {
			if tpl, perr := Parse(value); perr == nil && len(tpl.Vars()) > 0 {
				t.Fatalf("ValidateShellEnv(%q, %q) accepted an argument in a code variable", name, value)
			}
		}
	})
}
