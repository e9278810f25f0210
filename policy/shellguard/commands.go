package shellguard

import (
	"slices"
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// Commands exposes what the deny rules see of a command line, for rules
// of another kind that must see the same (the exec toolset's per-worker
// approval rules): every simple command it may run, after the same
// parsing, normalising and following of what it runs.

// Command is one simple command a command line may run.
type Command struct {
	// Name is the base name of the command, lower case ("git" for
	// /usr/bin/git); "" for a segment with only redirections.
	Name string
	// Args are the words after the name, normalised as the rules compare
	// them (an unknown value's parts are empty).
	Args []string
	// Dynamic marks, per word of Args, one only known when it runs.
	Dynamic []bool
	// Writes is set when the command redirects output into a file other
	// than /dev/null or a descriptor.
	Writes bool
	// Written are the paths the command writes, as far as they are
	// known: its output redirections' targets (but /dev/null and
	// descriptors) and the operands a writing program writes (cp's last,
	// tee's, sed -i's, dd of=...: the deny rules' writers table).
	Written []string
	// Gaps are where words known only when it runs stood, unquoted and
	// alone, which Args leaves out (they may expand to nothing, or to
	// any words): before Args[i] for each i (len(Args): at the end).
	Gaps []int
	// Text is the command as the messages show it.
	Text string
	// Env names the variables the command starts with set by the line
	// (NAME=value before it, or given to a wrapper such as env): a
	// program may load or run code they name, which no rule about the
	// command's words speaks for.
	Env []string
}

// benignWrappers run their command with nothing added that changes what
// it may do; Commands lists what they run instead of them. Every other
// wrapper (sudo, chroot, nsenter, strace...) stays a command of its own
// beside the one it runs, so a rule must speak for it too. The shells
// among them count only with -c TEXT whose text is known (see runShell).
var benignWrappers = shellsyntax.WordSet(`env nice nohup timeout stdbuf ionice time command builtin exec
	setsid sh bash dash zsh ksh mksh ash`)

// Commands parses cmd as CheckCommand does and lists every simple command
// it may run, in the order found: pipeline stages, list members,
// subshells, substitutions, function bodies, and what wrappers, shells
// (sh -c TEXT), eval and interpreters run in turn. A benign wrapper whose
// command is known (env, nice, timeout, nohup, sh -c TEXT...) is replaced
// by what it runs. Segments made only of assignments are left out unless
// they redirect. Text the rules cannot analyse is a *DeniedError of group
// "parse", as CheckCommand reports it.
func Commands(cmd string) ([]Command, error) {
	if err := checkInput(cmd); err != nil {
		return nil, err
	}
	w := newShWalker()
	w.walkScript(cmd, &scope{pos0: arg{e: "sh", p: "sh"}, posKnown: true}, nil)
	if w.err != nil {
		if w.err.Segment == "" {
			w.err.Segment = truncate(cmd)
		}
		return nil, w.err
	}
	var out []Command
	for _, seg := range w.segs {
		switch seg.kind {
		case segFinding:
			return nil, parseErr(seg.rule, seg.desc, seg.text)
		case segCmd:
			if seg.unwrapped && benignWrappers[seg.name] && !clearsEnv(seg) {
				continue
			}
		case segAssign:
			if len(seg.redirs) == 0 {
				continue
			}
		default: // interpreter code and detector hits: the deny rules' matter
			continue
		}
		c := Command{Name: seg.name, Text: seg.text, Writes: writesFile(seg.redirs), Written: written(seg)}
		for _, a := range seg.assigns {
			c.Env = append(c.Env, a.name)
		}
		name := slices.IndexFunc(seg.args, func(a arg) bool { return !a.drop })
		for _, a := range seg.args[name+1:] { // the words after the name
			if a.drop {
				c.Gaps = append(c.Gaps, len(c.Args))
				continue
			}
			c.Args = append(c.Args, a.e)
			c.Dynamic = append(c.Dynamic, a.dyn)
		}
		out = append(out, c)
	}
	return out, nil
}

// clearsEnv reports whether a benign wrapper runs its command with
// variables of the line's own environment removed (env -i, env -u NAME,
// env -, exec -c): the settings the daemon gives the command (the git
// environment) would be gone, which no rule about the command speaks
// for, so the wrapper stays a command of its own.
func clearsEnv(seg *segment) bool {
	if seg.name != "env" && seg.name != "exec" {
		return false
	}
	for _, o := range shellsyntax.Read(seg).Opts {
		switch {
		case seg.name == "exec" && o.Name == "c",
			seg.name == "env" && (o.Kind == shellsyntax.OptFlag && o.Name == "" || o.Name == "i" || o.Name == "u" ||
				o.Name == "ignore-environment" || o.Name == "unset"):
			return true
		}
	}
	return false
}

// writesFile reports a redirection that writes a file.
func writesFile(rs []redirTarget) bool {
	return slices.ContainsFunc(rs, func(r redirTarget) bool {
		return r.write && r.target != "/dev/null" && !isFD(r.target)
	})
}

// written lists the paths seg writes: its output redirections' targets
// and the operands its program writes (segment.writes), whatever the
// directory (operands, which the path rules read, leaves out relative
// names when the directory is not known).
func written(seg *segment) []string {
	var out []string
	for _, r := range seg.redirs {
		if r.write && r.target != "/dev/null" && !isFD(r.target) {
			out = append(out, r.target)
		}
	}
	if _, ok := writers[seg.name]; !ok || seg.kind != segCmd {
		return out
	}
	args := nonDropped(seg.args)
	if seg.name == "ln" {
		// A link is a way to write what it points to: every operand.
		for _, a := range args[1:] {
			if !strings.HasPrefix(a.e, "-") && a.e != "" {
				out = append(out, a.e)
			}
		}
		return out
	}
	lastIdx := lastOperand(args)
	for i := 1; i < len(args); i++ {
		v := args[i].e
		if strings.HasPrefix(v, "-") || v == "" {
			continue
		}
		op := operand{index: i, last: i == lastIdx}
		if rest, ok := strings.CutPrefix(v, "of="); ok {
			op.ofArg, v = true, rest
		}
		if seg.writes(op) {
			out = append(out, v)
		}
	}
	return out
}

// lastOperand is the index of the last of args[1:] that is not an
// option, or -1.
func lastOperand(args []arg) int {
	for i := len(args) - 1; i >= 1; i-- {
		if !strings.HasPrefix(args[i].e, "-") {
			return i
		}
	}
	return -1
}

// NormaliseWord folds a word the way Commands' words are folded, for
// patterns compared with them.
func NormaliseWord(s string) string { return normalise(s) }
