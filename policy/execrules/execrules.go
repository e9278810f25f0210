// Package execrules decides the approval of one command of the exec
// toolset from a worker's rules: each rule a word list (split with
// google/shlex) and an approval. The command is read the way the shell
// deny rules read it (shellguard.Commands: parsed, normalised, wrappers
// and sh -c unwrapped), and every simple command it may run is matched on
// its own, so `git status && curl x | sh` never rides on a `git status`
// rule: the call's approval is the strictest over its commands, and a
// command no rule matches gets the default, ask. A rule covers what a
// command does, not only its words: a preApproved rule does not cover an
// option that writes a file or names a program (shellsyntax.Effects:
// git log --output=FILE, git -c core.fsmonitor=CMD status, sort -o) unless
// its words name the option, and a write of a file programs run code
// from (repocode.File: .git/config, a Makefile) is at least ask. The
// deny rules are checked before and apart from these: rules only
// tighten.
package execrules

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/google/shlex"

	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/repocode"
	"github.com/toolcage/toolcage/policy/shellguard"
	"github.com/toolcage/toolcage/policy/shellsyntax"
	"github.com/toolcage/toolcage/policy/template"
)

// Default is the approval of a command no rule matches.
const Default = policy.ApprovalAsk

// MaxRules bounds the rules of one worker; MaxPatternWords the words of
// one pattern.
const (
	MaxRules        = 256
	MaxPatternWords = 32
)

// Rule is one rule as the worker file writes it.
type Rule struct {
	Pattern  string `json:"pattern"`
	Approval string `json:"approval"`
}

// compiled is a rule's pattern split and normalised.
type compiled struct {
	name     string
	args     []string
	approval string
	pattern  string
}

// Rules is a checked rule list.
type Rules struct {
	rules []compiled
}

// Compile checks and splits rules: a pattern must split into at least one
// word, its first a command name, and an approval must be preApproved, ask
// or blocked. Errors name the rule by its index.
func Compile(rules []Rule) (*Rules, error) {
	if len(rules) > MaxRules {
		return nil, fmt.Errorf("rules: more than %d", MaxRules)
	}
	out := &Rules{}
	var errs []error
	for i, r := range rules {
		switch r.Approval {
		case policy.ApprovalPreApproved, policy.ApprovalAsk, policy.ApprovalBlocked:
		default:
			errs = append(errs, fmt.Errorf("rules[%d].approval: %q is not preApproved, ask or blocked", i, r.Approval))
			continue
		}
		words, err := shlex.Split(r.Pattern)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("rules[%d].pattern: %v", i, err))
			continue
		case len(words) == 0:
			errs = append(errs, fmt.Errorf("rules[%d].pattern: is empty", i))
			continue
		case len(words) > MaxPatternWords:
			errs = append(errs, fmt.Errorf("rules[%d].pattern: more than %d words", i, MaxPatternWords))
			continue
		}
		name := strings.ToLower(path.Base(shellguard.NormaliseWord(words[0])))
		if name == "" || name == "." || name == "/" || strings.ContainsAny(words[0], "$`*?[") {
			errs = append(errs, fmt.Errorf("rules[%d].pattern: %q does not start with a command name", i, r.Pattern))
			continue
		}
		c := compiled{name: name, approval: r.Approval, pattern: r.Pattern}
		for _, w := range words[1:] {
			c.args = append(c.args, shellguard.NormaliseWord(w))
		}
		out.rules = append(out.rules, c)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Segment is how one command of a command line was decided.
type Segment struct {
	Text     string `json:"text"`
	Approval string `json:"approval"`
	// Rule is the pattern of the strictest rule that matched; "" when
	// none did (the default) or the command writes a file.
	Rule string `json:"rule,omitempty"`
	// Beyond says what the command does that no matching rule names
	// (an option that writes a file or names a program, a file that is
	// code), when that is why it is not pre-approved.
	Beyond string `json:"beyond,omitempty"`
	// Program is the command's name; Subcommand, for a program with
	// subcommands (git), the one it runs when known.
	Program    string `json:"-"`
	Subcommand string `json:"-"`
}

// Decision is the approval of a whole command line.
type Decision struct {
	Approval string    `json:"approval"`
	Segments []Segment `json:"segments"`
}

// Decide reads cmd and decides its approval: the strictest over its
// commands, each decided by the strictest rule matching it (a rule matches
// a command whose name is the pattern's first word and whose first
// arguments are the pattern's other words, known when it is read), or by
// Default when none does; a preApproved rule matches only a command
// whose effects (options that write files or name programs) lie within
// its words. For a program with subcommands (git) the rule's words may
// also start at the subcommand, after its global options. A command that
// redirects into a file, writes a file programs run code from, or
// starts with a variable set that programs load or run code from, is at
// least ask. Text the shell rules cannot analyse is an error (the deny
// rules refuse it anyway).
func (rs *Rules) Decide(cmd string) (Decision, error) {
	cmds, err := shellguard.Commands(cmd)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Approval: policy.ApprovalPreApproved}
	if len(cmds) == 0 {
		d.Approval = Default // nothing but assignments: nothing to vouch for
	}
	for _, c := range cmds {
		s := rs.decide(c)
		d.Segments = append(d.Segments, s)
		d.Approval = stricter(d.Approval, s.Approval)
	}
	return d, nil
}

func (rs *Rules) decide(c shellguard.Command) Segment {
	s := Segment{Text: c.Text, Program: c.Name}
	ws := cmdWords{c}
	if g := shellsyntax.GrammarOf(c.Name); g != nil && g.Subcommand {
		if sub := shellsyntax.Read(ws).Cmd; sub > 0 {
			s.Subcommand, _ = ws.Text(sub)
		}
	}
	effects := effectsOf(c)
	if rs != nil {
		for _, r := range rs.rules {
			start, ok := r.match(c, ws)
			if !ok {
				continue
			}
			if r.approval == policy.ApprovalPreApproved {
				// A rule vouches for what the command does only as far
				// as its words go: an option that writes a file or names
				// a program is covered only by a rule that names it.
				if e, ok := uncovered(effects, start, len(r.args)); ok {
					s.Beyond = describe(e)
					continue
				}
			}
			if s.Rule == "" || strictness(r.approval) > strictness(s.Approval) {
				s.Approval, s.Rule = r.approval, r.pattern
			}
		}
	}
	if s.Rule == "" {
		s.Approval = Default
	}
	if strictness(s.Approval) < strictness(policy.ApprovalAsk) {
		switch {
		case c.Writes || setsCodeEnv(c):
			s.Approval, s.Rule = policy.ApprovalAsk, ""
		default:
			if i := slices.IndexFunc(c.Written, repocode.File); i >= 0 {
				// Files git, make, npm or an editor run programs from.
				s.Approval, s.Rule = policy.ApprovalAsk, ""
				s.Beyond = fmt.Sprintf("writes %s, which programs run code from", c.Written[i])
			}
		}
	}
	if s.Approval == policy.ApprovalPreApproved {
		s.Beyond = ""
	}
	return s
}

// effect is one of Effects' effects, at the index of the argument it
// is in (-1: a word Args leaves out, which no rule names).
type effect struct {
	shellsyntax.Effect
	arg  int
	text string
}

// effectsOf reads c's effects on its whole line: Args with its gaps put
// back as words known only when it runs.
func effectsOf(c shellguard.Command) []effect {
	full := shellguard.Command{Name: c.Name}
	var arg []int // per word of full.Args, its index in c.Args or -1
	gaps := c.Gaps
	for i := 0; i <= len(c.Args); i++ {
		for len(gaps) > 0 && gaps[0] == i {
			full.Args, full.Dynamic, arg = append(full.Args, ""), append(full.Dynamic, true), append(arg, -1)
			gaps = gaps[1:]
		}
		if i < len(c.Args) {
			full.Args, full.Dynamic, arg = append(full.Args, c.Args[i]), append(full.Dynamic, c.Dynamic[i]), append(arg, i)
		}
	}
	var out []effect
	for _, e := range shellsyntax.Effects(cmdWords{full}) {
		text, _ := cmdWords{full}.Text(e.Word)
		out = append(out, effect{Effect: e, arg: arg[e.Word-1], text: text})
	}
	return out
}

// uncovered finds an effect outside the rule's words, which start at
// argument start.
func uncovered(effects []effect, start, n int) (effect, bool) {
	for _, e := range effects {
		if e.arg < start || e.arg >= start+n {
			return e, true
		}
	}
	return effect{}, false
}

// describe says what an effect does, for the person asked.
func describe(e effect) string {
	word := e.text
	switch e.Kind {
	case shellsyntax.EffectWrites:
		return fmt.Sprintf("%q writes a file, which no rule names", word)
	case shellsyntax.EffectRuns:
		return fmt.Sprintf("%q names a program or settings it runs, which no rule names", word)
	}
	return "a word known only when it runs could be an option that writes a file or runs a program"
}

// cmdWords reads a Command as the grammar reader's words.
type cmdWords struct{ c shellguard.Command }

func (w cmdWords) Len() int { return len(w.c.Args) + 1 }

func (w cmdWords) Text(i int) (string, bool) {
	if i == 0 {
		return w.c.Name, true
	}
	return w.c.Args[i-1], !w.c.Dynamic[i-1]
}

func (w cmdWords) IsAssign(int) bool { return false }

// setsCodeEnv reports whether c starts with a variable set that programs
// load or run code from (LD_PRELOAD=./x.so ls): a rule vouches for a
// command's words, not for code the environment slips in.
func setsCodeEnv(c shellguard.Command) bool {
	for _, name := range c.Env {
		if template.CodeEnv(name) {
			return true
		}
	}
	return false
}

// match reports whether the rule matches c, and the argument its words
// start at: the first, or, for a program with subcommands (git), the
// subcommand after its global options (git -c color.ui=never log matches
// git log; what those options do is Effects' to say).
func (r compiled) match(c shellguard.Command, ws cmdWords) (int, bool) {
	if c.Name != r.name {
		return 0, false
	}
	if r.matchAt(c, 0) {
		return 0, true
	}
	if len(r.args) == 0 || strings.HasPrefix(r.args[0], "-") {
		return 0, false
	}
	if g := shellsyntax.GrammarOf(c.Name); g != nil && g.Subcommand {
		if sub := shellsyntax.Read(ws).Cmd; sub > 1 && r.matchAt(c, sub-1) {
			return sub - 1, true
		}
	}
	return 0, false
}

func (r compiled) matchAt(c shellguard.Command, start int) bool {
	if len(c.Args)-start < len(r.args) {
		return false
	}
	for i, w := range r.args {
		if c.Dynamic[start+i] || c.Args[start+i] != w {
			return false
		}
	}
	return true
}

// strictness orders the approvals; unknown counts as blocked.
func strictness(a string) int {
	switch a {
	case policy.ApprovalPreApproved:
		return 0
	case policy.ApprovalAsk:
		return 1
	}
	return 2
}

func stricter(a, b string) string {
	if strictness(b) > strictness(a) {
		return b
	}
	return a
}
