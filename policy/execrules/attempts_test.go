package execrules

import (
	"os"
	"strings"
	"testing"
)

// An agent holding an exec tool whose rules pre-approve a few read-only
// commands tries to run something else under them: every wrapper, quoting
// and indirection here must come out no looser than ask, and a blocked
// command stays blocked however it is spelled.
func TestDecideWrapperAttempts(t *testing.T) {
	rs := mustCompile(t,
		Rule{Pattern: "git status", Approval: "preApproved"},
		Rule{Pattern: "git log", Approval: "preApproved"},
		Rule{Pattern: "ls", Approval: "preApproved"},
		Rule{Pattern: "cat", Approval: "preApproved"},
		Rule{Pattern: "git push", Approval: "blocked"},
	)
	for _, tt := range []struct{ cmd, want string }{
		// What a variable makes a pre-approved program run.
		{"GIT_EXTERNAL_DIFF=./x git log -p --ext-diff", "ask"},
		{"GIT_PAGER='sh -c ./x' git log", "ask"},
		{"PAGER=./x git log", "ask"},
		{"LD_PRELOAD=./x.so ls", "ask"},
		{"export GIT_SSH_COMMAND=./x; git status", "ask"},
		// Options that run or write.
		{"git -c core.pager=./x log", "ask"},
		{"git -c core.fsmonitor=./x status", "ask"},
		{"git --exec-path=. status", "ask"},
		{"git log --output=/tmp/x", "ask"}, // an option that writes a file: no rule names it
		{"cat x > y", "ask"},
		{"ls >> y", "ask"},
		{"ls | tee y", "ask"},
		// Wrappers that run another command.
		{"xargs git push < list", "blocked"},
		{"find . -exec git push \\;", "blocked"},
		{"command git push", "blocked"},
		{"exec git push", "blocked"},
		{"builtin eval 'git push'", "blocked"},
		{"eval 'git push'", "blocked"},
		{"env -i git push", "blocked"},
		{"sudo git push", "blocked"},
		{"busybox sh -c 'git push'", "blocked"},
		{"ls; $(echo git) push", "ask"},
		{"\\git push", "blocked"},
		{"g''it push", "blocked"},
		{"'git' \"push\"", "blocked"},
		{"/usr/bin/../bin/git push", "blocked"},
		{"alias g=git; g push", "ask"},
		{"f() { git \"$@\"; }; f push", "ask"},
		{"git status && sh -c \"$(cat script)\"", "ask"},
		{"cat <(git push)", "blocked"},
		{"ls `git push`", "blocked"},
		{"python3 -c 'import os; os.system(\"git push\")'", "blocked"},
	} {
		d, err := rs.Decide(tt.cmd)
		if err != nil {
			continue // unanalysable: the deny rules refuse it before any rule
		}
		if strictness(d.Approval) < strictness(tt.want) {
			t.Errorf("%s: %s, want at least %s (%+v)", tt.cmd, d.Approval, tt.want, d.Segments)
		}
	}
}

// Variables that load or run code make any command at least ask; ones
// that do not leave the rule's word.
func TestDecideCodeEnv(t *testing.T) {
	rs := mustCompile(t, Rule{Pattern: "ls", Approval: "preApproved"}, Rule{Pattern: "git log", Approval: "preApproved"})
	for _, tt := range []struct{ cmd, want string }{
		{"LD_PRELOAD=./x.so ls", "ask"},
		{"env LD_PRELOAD=./x.so ls", "ask"},
		{"env -u HOME LD_LIBRARY_PATH=. ls", "ask"},
		{"PYTHONPATH=. ls", "ask"},
		{"BASH_ENV=./x ls", "ask"},
		{"NODE_OPTIONS=--require=./x ls", "ask"},
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=./x git log", "ask"},
		{"GIT_DIR=./evil git log", "ask"},
		{"PATH=.:$PATH ls", "ask"},
		{"timeout 5 env LD_AUDIT=./x.so ls", "ask"},
		{"LC_ALL=C ls", "preApproved"},
		{"TZ=UTC git log", "preApproved"},
		{"env LANG=C.UTF-8 ls", "preApproved"},
	} {
		d, err := rs.Decide(tt.cmd)
		if err != nil {
			t.Errorf("%s: %v", tt.cmd, err)
			continue
		}
		if d.Approval != tt.want {
			t.Errorf("%s: %s, want %s (%+v)", tt.cmd, d.Approval, tt.want, d.Segments)
		}
	}
}

// TestEffectsCorpus: testdata/effects.txt, an approved command that is
// more than it looks (options that write files or name programs, writes
// of files programs run code from) and its everyday neighbours.
func TestEffectsCorpus(t *testing.T) {
	var rules []Rule
	for _, p := range []string{"git log", "git diff", "git status", "git show", "git grep", "git config user.name", "git",
		"sort", "sed", "cp", "tee", "ln", "find", "make test", "npm test", "curl", "tar", "cat"} {
		rules = append(rules, Rule{Pattern: p, Approval: "preApproved"})
	}
	rs := mustCompile(t, rules...)
	data, err := os.ReadFile("testdata/effects.txt")
	if err != nil {
		t.Fatal(err)
	}
	var attacks, neighbours int
	for n, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		want, cmd, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("effects.txt:%d: no tab", n+1)
		}
		if want == "ask" {
			attacks++
		} else {
			neighbours++
		}
		d, err := rs.Decide(cmd)
		if err != nil {
			t.Errorf("effects.txt:%d: %s: %v", n+1, cmd, err)
			continue
		}
		if d.Approval != want {
			t.Errorf("effects.txt:%d: %s: %s, want %s (%+v)", n+1, cmd, d.Approval, want, d.Segments)
		}
	}
	t.Logf("%d commands more than they look, %d everyday neighbours", attacks, neighbours)
}

// TestDecideClearedEnv: a wrapper that runs its command without the
// environment the daemon gives it (the git environment) is a command of
// its own, which the command's rule does not cover.
func TestDecideClearedEnv(t *testing.T) {
	rs := mustCompile(t, Rule{Pattern: "git status", Approval: "preApproved"})
	for _, tt := range []struct{ cmd, want string }{
		{"env -i git status", "ask"},
		{"env - git status", "ask"},
		{"env -u GIT_CONFIG_COUNT git status", "ask"},
		{"env --unset=GIT_CONFIG_COUNT git status", "ask"},
		{"env --ignore-environment git status", "ask"},
		{"exec -c git status", "ask"},
		{"unset GIT_CONFIG_COUNT; git status", "ask"},
		{"export -n GIT_CONFIG_COUNT; git status", "ask"},
		{"GIT_CONFIG_COUNT=0 git status", "ask"},
		{"env LC_ALL=C git status", "preApproved"},
		{"exec git status", "preApproved"},
	} {
		d, err := rs.Decide(tt.cmd)
		if err != nil {
			t.Errorf("%s: %v", tt.cmd, err)
			continue
		}
		if d.Approval != tt.want {
			t.Errorf("%s: %s, want %s (%+v)", tt.cmd, d.Approval, tt.want, d.Segments)
		}
	}
}
