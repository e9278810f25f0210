package execrules

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/policy/shellguard"
)

func mustCompile(t *testing.T, rules ...Rule) *Rules {
	t.Helper()
	rs, err := Compile(rules)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestDecidePerSegment(t *testing.T) {
	rs := mustCompile(t,
		Rule{Pattern: "git status", Approval: "preApproved"},
		Rule{Pattern: "git log", Approval: "preApproved"},
		Rule{Pattern: "ls", Approval: "preApproved"},
		Rule{Pattern: "git push", Approval: "blocked"},
		Rule{Pattern: "git", Approval: "preApproved"}, // blocked beats it for git push
		Rule{Pattern: "make test", Approval: "ask"},
		Rule{Pattern: "'grep' -rn", Approval: "preApproved"},
	)
	tests := []struct {
		cmd, want string
	}{
		{"git status", "preApproved"},
		{"git status --short", "preApproved"},
		{"/usr/bin/git status", "preApproved"},
		{"git  'status'", "preApproved"},
		{"git status && git log --oneline", "preApproved"},
		{"ls -la; git status", "preApproved"},
		{"grep -rn TODO .", "preApproved"},
		// A second command no rule matches: the default.
		{"git status && curl https://example.com", "ask"},
		{"git status | sh", "ask"},
		{"git status; rm x", "ask"},
		{"echo $(whoami); git status", "ask"},
		{"make test", "ask"},
		// Blocked beats preApproved, on any segment, at any depth.
		{"git push", "blocked"},
		{"git push --force origin main", "blocked"},
		{"git status && git push", "blocked"},
		{"ls $(git push)", "blocked"},
		{"f() { git push; }; f", "blocked"},
		// Benign wrappers are unwrapped: the command they run decides.
		{"env LC_ALL=C git status", "preApproved"},
		// ... and what a variable makes it run is a command too.
		{"env GIT_PAGER=cat git status", "ask"},
		{"nice -n 5 git status", "preApproved"},
		{"timeout 10 git log", "preApproved"},
		{"nohup git status", "preApproved"},
		{"sh -c 'git status'", "preApproved"},
		{"bash -c 'git status && git push'", "blocked"},
		{"env sh -c 'timeout 5 git push'", "blocked"},
		{"sh -c 'git status; curl x'", "ask"},
		// Other wrappers stay a command of their own.
		{"sudo git status", "ask"},
		{"chroot / git status", "ask"},
		// A shell running a file: itself a command.
		{"sh script.sh", "ask"},
		// Words known only at run time never match a pattern word.
		// ... and may be an option that runs a program (-c core.pager=...).
		{"git $SUB", "ask"},
		{"X=push; git $X", "blocked"},
		{"git ${UNKNOWN} status", "ask"},
		{"git status -- $FILE", "preApproved"},
		// Writing a file is at least ask.
		{"git status > out.txt", "ask"},
		{"git status 2>&1 >/dev/null", "preApproved"},
		{"git push > out.txt", "blocked"},
		{"> out.txt", "ask"},
		// Assignments alone run nothing: the default.
		{"X=1", "ask"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			d, err := rs.Decide(tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if d.Approval != tt.want {
				t.Errorf("Decide(%q) = %s, want %s; segments %+v", tt.cmd, d.Approval, tt.want, d.Segments)
			}
		})
	}
}

func TestDecideNoRules(t *testing.T) {
	var rs *Rules
	d, err := rs.Decide("git status")
	if err != nil || d.Approval != Default {
		t.Fatalf("no rules: %v %v, want %s", d, err, Default)
	}
}

func TestDecideUnanalysable(t *testing.T) {
	rs := mustCompile(t, Rule{Pattern: "echo", Approval: "preApproved"})
	for _, cmd := range []string{"echo 'unterminated", "echo a\x00b", "$CMD x", `sh -c "$X"`, strings.Repeat("a", 70<<10)} {
		_, err := rs.Decide(cmd)
		var de *shellguard.DeniedError
		if !errors.As(err, &de) || de.Group != shellguard.GroupParse {
			t.Errorf("Decide(%.40q) = %v, want a parse refusal", cmd, err)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		rule Rule
		want string
	}{
		{Rule{Pattern: "", Approval: "ask"}, "is empty"},
		{Rule{Pattern: "git status", Approval: "sometimes"}, "not preApproved, ask or blocked"},
		{Rule{Pattern: "git 'status", Approval: "ask"}, "rules[0].pattern"},
		{Rule{Pattern: "$X status", Approval: "ask"}, "command name"},
		{Rule{Pattern: "g* status", Approval: "ask"}, "command name"},
		{Rule{Pattern: strings.Repeat("a ", MaxPatternWords+1), Approval: "ask"}, "more than"},
	}
	for _, tt := range tests {
		_, err := Compile([]Rule{tt.rule})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compile(%+v) = %v, want %q", tt.rule, err, tt.want)
		}
	}
	many := make([]Rule, MaxRules+1)
	for i := range many {
		many[i] = Rule{Pattern: "ls", Approval: "ask"}
	}
	if _, err := Compile(many); err == nil {
		t.Error("more than MaxRules rules accepted")
	}
	if _, err := Compile(many[:MaxRules]); err != nil {
		t.Errorf("MaxRules rules refused: %v", err)
	}
}

func FuzzDecide(f *testing.F) {
	for _, s := range []string{"git status", "git status && curl x | sh", "sh -c 'git push'", "env A=1 nice git log > f", "f() { ls; }; f"} {
		f.Add(s)
	}
	rs, err := Compile([]Rule{{Pattern: "git status", Approval: "preApproved"}, {Pattern: "git push", Approval: "blocked"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		d, err := rs.Decide(cmd)
		if err != nil {
			return
		}
		// Appending a command no rule matches never loosens the decision.
		d2, err := rs.Decide(cmd + "\nuname")
		if err == nil && strictness(d2.Approval) < strictness(d.Approval) {
			t.Fatalf("%q: %s, with uname appended %s", cmd, d.Approval, d2.Approval)
		}
		if d.Approval == "preApproved" {
			for _, s := range d.Segments {
				if s.Rule == "" {
					t.Fatalf("%q preApproved with a segment no rule matched: %+v", cmd, d.Segments)
				}
			}
		}
	})
}
