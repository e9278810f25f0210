package policy

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The differential harness: while the hand-written front-end (shellsplit.go)
// and mvdan.cc/sh's parser both exist, every command of the test tables is
// checked through both and the verdicts compared. Each divergence is decided
// in testdata/shellparser_divergences.md.

func shellVerdict(rs *ShellRules, cmd string, old bool) string {
	err := rs.checkCommand(cmd, old)
	if err == nil {
		return "allow"
	}
	return shellRuleID(err)
}

// shellDiffCorpus is every command the shell tests know.
func shellDiffCorpus() []string {
	var cmds []string
	for _, tc := range shellDenyCases {
		cmds = append(cmds, tc.cmd)
	}
	cmds = append(cmds, shellAllowCases...)
	cmds = append(cmds, shellFuzzDenied...)
	wrap := []func(string) string{
		func(s string) string { return "sh -c " + shQuote(s) },
		func(s string) string { return "eval " + shQuote(s) },
		func(s string) string { return "echo " + shQuote(s) + " | sh" },
		func(s string) string { return "sh <<'END'\n" + s + "\nEND" },
		func(s string) string { return "sh <<END\n" + s + "\nEND" },
	}
	n := len(cmds)
	for _, c := range cmds[:n] {
		for _, f := range wrap {
			cmds = append(cmds, f(c))
		}
	}
	return cmds
}

func TestShellParserDifferential(t *testing.T) {
	rs := loadDefaultShellRules(t)
	type div struct{ cmd, old, new string }
	var divs []div
	cmds := shellDiffCorpus()
	for _, cmd := range cmds {
		o, n := shellVerdict(rs, cmd, true), shellVerdict(rs, cmd, false)
		if o != n {
			divs = append(divs, div{cmd, o, n})
		}
	}
	sort.Slice(divs, func(i, j int) bool { return divs[i].cmd < divs[j].cmd })
	var b strings.Builder
	for _, d := range divs {
		fmt.Fprintf(&b, "%q\told=%s\tnew=%s\n", d.cmd, d.old, d.new)
	}
	if out := os.Getenv("TOOLCAGE_SHELL_DIFF_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d commands, %d divergences", len(cmds), len(divs))
}

// FuzzShellParserDifferential compares the two front-ends on any text. A
// divergence is only reported when the new front-end allows what the old
// one denied: the other direction is stricter and decided case by case.
func FuzzShellParserDifferential(f *testing.F) {
	for _, c := range shellDiffCorpus() {
		f.Add(c)
	}
	rs := loadDefaultShellRules(f)
	f.Fuzz(func(t *testing.T, s string) {
		if shellDecidedDivergence(s) {
			return
		}
		o, n := shellVerdict(rs, s, true), shellVerdict(rs, s, false)
		if o != "allow" && !strings.HasPrefix(o, "parse/") && n == "allow" {
			t.Errorf("%q: old %s, new allows", s, o)
		}
	})
}

// shellDecidedDivergence reports text of a class whose divergence is
// decided in testdata/shellparser_divergences.md.
func shellDecidedDivergence(s string) bool {
	// 1. <( or >( inside a word: bash substitutes it there (a<(b) is one
	// word, a/dev/fd/63), the old front-end split the word before it.
	return shMidWordProcSub.MatchString(s)
}

var shMidWordProcSub = regexp.MustCompile(`[^\s;&|()<>]+[<>]\(`)
