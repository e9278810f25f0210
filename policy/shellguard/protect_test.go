package shellguard

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestProtectCorpus is issue 24's protection corpus: with the ask groups
// on, every command that destroys work in a workspace asks a person (or a
// deny rule refuses it: deny wins), and no everyday command is asked or
// refused. Without them (CheckCommand) the ask rules are silent.
func TestProtectCorpus(t *testing.T) {
	rs := loadDefaultShellRules(t)
	asked := 0
	for _, c := range readCorpus(t, "testdata/protect/destroying.txt") {
		err := rs.CheckCommandProtected(c.cmd)
		var ask *AskError
		var deny *DeniedError
		switch {
		case c.want == "deny":
			if !errors.As(err, &deny) {
				t.Errorf("%s:%d: CheckCommandProtected(%q) = %v, want denied", c.file, c.line, c.cmd, err)
			}
			continue
		case !errors.As(err, &ask):
			t.Errorf("%s:%d: CheckCommandProtected(%q) = %v, want asked (%s)", c.file, c.line, c.cmd, err, c.want)
			continue
		case c.want != "ask" && ask.Rule != c.want:
			t.Errorf("%s:%d: CheckCommandProtected(%q) asked by %s, want %s", c.file, c.line, c.cmd, ask.Rule, c.want)
		}
		asked++
		if err := rs.CheckCommand(c.cmd); err != nil {
			t.Errorf("%s:%d: CheckCommand(%q) = %v, want nil (ask rules off)", c.file, c.line, c.cmd, err)
		}
	}
	if asked < 150 {
		t.Errorf("protection corpus: %d destroying commands asked, want at least 150", asked)
	}
	data, err := os.ReadFile("testdata/protect/everyday.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line == "" || line[0] == '#' {
			continue
		}
		n++
		if err := rs.CheckCommandProtected(line); err != nil {
			t.Errorf("everyday command not let through: %q: %v", line, err)
		}
	}
	if n < 150 {
		t.Errorf("protection corpus: %d everyday commands, want at least 150", n)
	}
}

// TestProtectMultiLine: the forms a one-line corpus cannot hold, read with
// the deny rules' walk (here-documents, functions over several lines).
func TestProtectMultiLine(t *testing.T) {
	rs := loadDefaultShellRules(t)
	for _, tt := range []struct{ cmd, rule string }{
		{"sh <<EOF\ngit reset --hard\nEOF", "git_reset_hard"},
		{"bash <<'X'\ncd src\nrm -rf lib\nX", "rm_recursive"},
		{"wipe() {\n  git clean -fdx\n}\nwipe", "git_clean_force"},
		{"set -e\ngit fetch\ngit push --force-with-lease origin HEAD", "git_push_rewrite"},
		{"cat <<EOF | sh\ngit stash clear\nEOF", "git_stash_discard"},
		{"if [ -d build ]; then\n  rm -r build\nfi", "rm_recursive"},
	} {
		var ask *AskError
		if err := rs.CheckCommandProtected(tt.cmd); !errors.As(err, &ask) || ask.Rule != tt.rule {
			t.Errorf("CheckCommandProtected(%q) = %v, want asked by %s", tt.cmd, err, tt.rule)
		}
	}
	for _, cmd := range []string{"cat <<EOF > notes.md\ngit reset --hard is how to throw work away\nEOF", "git add -A\ngit commit -m wip\ngit push"} {
		if err := rs.CheckCommandProtected(cmd); err != nil {
			t.Errorf("CheckCommandProtected(%q) = %v, want nil", cmd, err)
		}
	}
}

func TestAskGroupVerdict(t *testing.T) {
	const file = "version: 1\ngroups:\n  - name: mine\n    verdict: %s\n    rules:\n      - name: r\n        command: [frob]\n"
	if _, err := Load([]byte(strings.Replace(file, "%s", "maybe", 1))); err == nil || !strings.Contains(err.Error(), "verdict must be deny or ask") {
		t.Fatalf("Load with verdict maybe = %v, want an error", err)
	}
	rs, err := Load([]byte(strings.Replace(file, "%s", "ask", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.CheckCommand("frob x"); err != nil {
		t.Fatalf("CheckCommand = %v, want nil (ask rules off)", err)
	}
	var ask *AskError
	if err := rs.CheckArgvProtected([]string{"env", "frob", "x"}); !errors.As(err, &ask) || ask.Rule != "r" || !strings.HasPrefix(err.Error(), "asks a person: ") {
		t.Fatalf("CheckArgvProtected = %v, want asked by mine/r", err)
	}
	off, err := rs.With(Options{DisabledGroups: []string{"mine"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := off.CheckCommandProtected("frob x"); err != nil {
		t.Fatalf("ask group disabled: %v", err)
	}
	// Deny wins over ask.
	def := loadDefaultShellRules(t)
	var deny *DeniedError
	if err := def.CheckCommandProtected("git reset --hard; rm -rf /"); !errors.As(err, &deny) {
		t.Fatalf("deny and ask in one line = %v, want denied", err)
	}
}
