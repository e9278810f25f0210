package shellguard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusCase is one line of a testdata/deny_classes file: WANT COMMAND.
type corpusCase struct {
	file string
	line int
	want string // group, group/rule, "deny" or "allow"
	cmd  string
}

func readCorpus(t *testing.T, path string) []corpusCase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cs []corpusCase
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		want, cmd, ok := strings.Cut(line, "  ")
		cmd = strings.TrimSpace(cmd)
		if !ok || cmd == "" {
			t.Fatalf("%s:%d: want WANT  COMMAND, got %q", path, i+1, line)
		}
		cs = append(cs, corpusCase{file: filepath.Base(path), line: i + 1, want: want, cmd: cmd})
	}
	return cs
}

// TestDenyClasses runs every class corpus of issue #14: each attack
// spelling must be refused by the expected group (or rule), each look-alike
// allowed.
func TestDenyClasses(t *testing.T) {
	rs := loadDefaultShellRules(t)
	files, err := filepath.Glob("testdata/deny_classes/*.txt")
	if err != nil || len(files) < 8 {
		t.Fatalf("deny class corpora: %v %v", files, err)
	}
	for _, f := range files {
		cases := readCorpus(t, f)
		denies := 0
		for _, c := range cases {
			err := rs.CheckCommand(c.cmd)
			got := ruleID(err)
			switch c.want {
			case "allow":
				if err != nil {
					t.Errorf("%s:%d: CheckCommand(%q) = %v, want allowed", c.file, c.line, c.cmd, err)
				}
				continue
			case "deny":
				if err == nil {
					t.Errorf("%s:%d: CheckCommand(%q) = nil, want denied", c.file, c.line, c.cmd)
				}
			default:
				if got != c.want && !strings.HasPrefix(got, c.want+"/") {
					t.Errorf("%s:%d: CheckCommand(%q) denied by %q, want %s (%v)", c.file, c.line, c.cmd, got, c.want, err)
				}
			}
			denies++
		}
		if denies < 5 {
			t.Errorf("%s: only %d attack spellings", f, denies)
		}
	}
}

// TestEverydayCommands holds the false-deny rate of the default rules on
// ordinary developer commands at zero, and prints it.
func TestEverydayCommands(t *testing.T) {
	rs := loadDefaultShellRules(t)
	data, err := os.ReadFile("testdata/everyday_commands.txt")
	if err != nil {
		t.Fatal(err)
	}
	n, denied := 0, 0
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		n++
		if err := rs.CheckCommand(line); err != nil {
			denied++
			t.Errorf("everyday command denied: %q: %v", line, err)
		}
		if err := rs.CheckCommandProtected(line); err != nil && !errors.As(err, new(*AskError)) {
			t.Errorf("everyday command denied with the ask rules on: %q: %v", line, err)
		} else if err != nil {
			t.Logf("asked in a protected workspace: %q: %v", line, err)
		}
	}
	if n < 200 {
		t.Fatalf("everyday corpus has %d commands, want at least 200", n)
	}
	t.Logf("everyday commands: %d/%d denied, false-deny rate %.2f%%", denied, n, 100*float64(denied)/float64(n))
}
