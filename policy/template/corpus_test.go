package template

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/policy/shellguard"
)

// TestDenyCorpusAsTemplates runs every row of the deny rules' class corpora
// (policy/shellguard/testdata/deny_classes) as a fixed shell tool would:
// compiled and rendered as a template, then judged the way the daemon
// judges the rendering (an argv by CheckArgv, sh -c text by CheckCommand).
// Each attack must still be refused and each look-alike still pass, so
// the argv path and the text path agree (issue 22).
func TestDenyCorpusAsTemplates(t *testing.T) {
	data, err := os.ReadFile("../../configs/shell_rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := shellguard.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../shellguard/testdata/deny_classes/*.txt")
	if err != nil || len(files) < 8 {
		t.Fatalf("deny class corpora: %v %v", files, err)
	}
	n, argv := 0, 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || line[0] == '#' {
				continue
			}
			want, cmd, _ := strings.Cut(line, "  ")
			cmd = strings.TrimSpace(cmd)
			if strings.Contains(cmd, "{{") {
				continue // a placeholder to the template parser
			}
			cs, err := CompileShell(cmd)
			if err != nil {
				continue // not a template the check accepts: no tool runs it
			}
			r, err := cs.Render(nil, ShellOptions{})
			if err != nil {
				t.Errorf("%s:%d: %q: render: %v", filepath.Base(f), i+1, cmd, err)
				continue
			}
			n++
			var verdict error
			if r.Mode == ShellModeArgv {
				argv++
				verdict = rules.CheckArgv(r.Argv)
			} else {
				verdict = rules.CheckCommand(r.Command)
			}
			switch {
			case want == "allow" && verdict != nil:
				t.Errorf("%s:%d: %q as a template (%s): %v, want allowed", filepath.Base(f), i+1, cmd, r.Mode, verdict)
			case want != "allow" && verdict == nil:
				t.Errorf("%s:%d: %q as a template (%s, %q): allowed, want refused", filepath.Base(f), i+1, cmd, r.Mode, r.Argv)
			}
		}
	}
	if n < 500 {
		t.Fatalf("only %d corpus rows rendered as templates", n)
	}
	t.Logf("deny corpora as templates: %d rows, %d as an argv", n, argv)
}
