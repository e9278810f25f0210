// Package execrules decides the approval of one command of the exec
// toolset from a worker's rules: each rule a word list (split with
// google/shlex) and an approval. The command is read the way the shell
// deny rules read it (shellguard.Commands: parsed, normalised, wrappers
// and sh -c unwrapped), and every simple command it may run is matched on
// its own, so `git status && curl x | sh` never rides on a `git status`
// rule: the call's approval is the strictest over its commands, and a
// command no rule matches gets the default, ask. The deny rules are
// checked before and apart from these: rules only tighten.
package execrules

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/google/shlex"

	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/shellguard"
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
// Default when none does. A command that redirects into a file, or
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
	s := Segment{Text: c.Text}
	if rs != nil {
		for _, r := range rs.rules {
			if r.matches(c) && (s.Rule == "" || strictness(r.approval) > strictness(s.Approval)) {
				s.Approval, s.Rule = r.approval, r.pattern
			}
		}
	}
	if s.Rule == "" {
		s.Approval = Default
	}
	if (c.Writes || setsCodeEnv(c)) && strictness(s.Approval) < strictness(policy.ApprovalAsk) {
		s.Approval, s.Rule = policy.ApprovalAsk, ""
	}
	return s
}

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

func (r compiled) matches(c shellguard.Command) bool {
	if c.Name != r.name || len(c.Args) < len(r.args) {
		return false
	}
	for i, w := range r.args {
		if c.Dynamic[i] || c.Args[i] != w {
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
