package template

// Command-level rules for shell templates. Quoting makes a value one word;
// these rules keep that word from doing a program's job:
//
//   - no placeholder may name the program to run: not the command word, not
//     the command a wrapper runs (env, sudo, timeout, xargs, nice, ...), not
//     find -exec's command;
//   - no placeholder may be code: the argument of eval, trap, let, alias;
//     the command string of sh -c, python -c, perl -e, node -e, su -c, ...;
//     the program of awk or sed; the remote command of ssh; the config of
//     git -c or ssh -o;
//   - no placeholder may be a bash variable name (read, unset, printf -v,
//     test -v, declare, export, mapfile): bash evaluates a name's
//     subscript, so a[$(cmd)] runs cmd;
//   - no program may read its program from data an argument can reach:
//     sh or python with no script (standard input), sh /dev/stdin, bash
//     <(…), xargs sh -c (xargs appends its input), xargs -I{} ... {} and
//     find -exec ... {} in a code or command position;
//   - no placeholder may set an environment variable that names code or a
//     search path (PATH, LD_PRELOAD, BASH_ENV, GIT_SSH_COMMAND, PYTHONPATH,
//     NODE_OPTIONS, ...);
//   - bash arithmetic ($((…)), ((…)), $[…], let, declare, array subscripts,
//     ${x:offset}, [[ -eq ]]) evaluates variable contents recursively, so a
//     template with arguments may not use it at all: a value can reach it
//     through any variable or command output. Function definitions and
//     aliases, which can give arguments any meaning, are refused likewise.
//
// The option rule (a value may not start with "-" where it would be read as
// an option) is applied at render time, on the words marked here.
//
// Gaps, by design: an argument passed to an option that itself interprets
// text (curl -K, tar's old-style first argument, make VAR=..., docker
// exec) gets that option's meaning; a value the template's own commands
// treat as code (written to a file that is then run, say) runs; the tables
// below cover the common programs, not every program.

import (
	"path"
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// progKind says what a program does with its operands.
type progKind int

const (
	opts    progKind = iota // only some option arguments are code
	wrapper                 // runs its first operand (after leading ones) as a command
	interp                  // the first operand (or a code option's argument) is code or a script
	eval                    // every argument is shell code
	source                  // the first operand is a script to run in this shell
	remote                  // operands after the leading ones become a shell command line
	names                   // operands are variable names
	declare                 // declare/typeset: names, and attributes that make bash evaluate
	export                  // export/readonly/local: NAME=value words, names
	find                    // find: -exec and friends run a command
	printf                  // printf -v NAME
	test                    // test/[: -v NAME, -R NAME
	curl                    // curl: an option argument starting with @ or < names a file to read
)

// leadWords are reserved words after which a command starts.
var leadWords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "do": true,
	"while": true, "until": true, "!": true, "{": true,
}

// noCommand are reserved words after which no command word follows in
// the same simple command.
var noCommand = map[string]bool{
	"for": true, "select": true, "case": true, "function": true, "in": true,
	"esac": true, "fi": true, "done": true, "}": true, "]]": true, "[[": true,
}

// kindOf is what the template check does with a program, from its
// grammar (policy/shellsyntax).
func kindOf(g *shellsyntax.Grammar) progKind {
	switch g.Role {
	case shellsyntax.RoleWrapper:
		if g.Join || g.CmdLine {
			return remote
		}
		return wrapper
	case shellsyntax.RolePlain:
		switch {
		case g.Join:
			return remote
		case g.Subcommand:
			return wrapper
		}
		return opts
	case shellsyntax.RoleShell, shellsyntax.RoleInterp:
		return interp
	case shellsyntax.RoleEval:
		return eval
	case shellsyntax.RoleSource:
		return source
	case shellsyntax.RoleSu:
		return remote
	case shellsyntax.RoleXargs:
		return wrapper
	case shellsyntax.RoleFind:
		return find
	case shellsyntax.RoleNames:
		return names
	case shellsyntax.RoleDeclare:
		return declare
	case shellsyntax.RoleExport:
		return export
	case shellsyntax.RolePrintf:
		return printf
	case shellsyntax.RoleTest:
		return test
	case shellsyntax.RoleCurl:
		return curl
	}
	return opts
}

// checkRules applies the command rules to every command of the template.
func (ck *checker) checkRules() error {
	if err := ck.checkBash(); err != nil {
		return err
	}
	for _, c := range ck.cmds {
		if err := ck.checkCommand(c); err != nil {
			return err
		}
	}
	for _, c := range ck.nested {
		if err := ck.checkCommand(c); err != nil {
			return err
		}
	}
	return ck.checkBash()
}

// checkBash refuses, in a template with arguments, the bash constructs
// that give values a meaning the rules cannot follow.
func (ck *checker) checkBash() error {
	if ck.hasArgs && ck.definePos >= 0 {
		return ck.errAt(ck.definePos, "%s can give its arguments any meaning (a body can run \"$@\"); it cannot be used in a template with arguments", ck.defineWhat)
	}
	if ck.hasArgs && ck.arithPos >= 0 {
		return ck.errAt(ck.arithPos, "%s is bash arithmetic, which evaluates variable contents as code (a value like a[$(cmd)] runs cmd); it cannot be used in a template with arguments", ck.arithWhat)
	}
	return nil
}

// tainted reports whether a word can carry an argument's value: it holds a
// placeholder, or, in a template with arguments, an expansion (a variable
// or command output the value may have flowed into).
func (ck *checker) tainted(w *word) bool {
	return w.hasPH || w.fromData || w.expand && ck.hasArgs
}

// scriptTainted reports whether a word naming a script to run can be chosen
// by an argument: a placeholder, data filled in at run time, or, in a
// template with arguments, standard input or a process substitution (which
// can carry a value).
func (ck *checker) scriptTainted(w *word) bool {
	if w.hasPH || w.fromData {
		return true
	}
	if !ck.hasArgs {
		return false
	}
	if w.procSubst {
		return true
	}
	lit, ok := literal(w)
	return ok && isStdin(lit)
}

// isStdin reports whether a path names standard input or a pipe.
func isStdin(path string) bool {
	if path == "-" {
		return true
	}
	for _, p := range []string{"/dev/stdin", "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// checkAssign refuses a placeholder in the value of an environment variable
// that programs read as code, as a place to load code from, or as a
// command: PATH=..., LD_PRELOAD=..., GIT_SSH_COMMAND=..., PYTHONPATH=...
func (ck *checker) checkAssign(w *word) error {
	if w.assign != "" && w.hasPH && codeEnv(w.assign) {
		return ck.errAt(w.pos, "an argument may not set %s: programs read it as code, a command or a place to load code from", w.assign)
	}
	return nil
}

// operands drops redirection targets and here-document delimiters.
func operands(c *command) []*word {
	ws := make([]*word, 0, len(c.words))
	for _, w := range c.words {
		if !w.redir && !w.heredoc {
			ws = append(ws, w)
		}
	}
	return ws
}

// checkCommand finds the command word of a simple command and checks it.
func (ck *checker) checkCommand(c *command) error {
	ws := operands(c)
	i := 0
	for i < len(ws) {
		lit, ok := literal(ws[i])
		if !ok || ws[i].quoted {
			break
		}
		if noCommand[lit] {
			return nil
		}
		if !leadWords[lit] {
			break
		}
		i++
	}
	for i < len(ws) && ws[i].assign != "" {
		if err := ck.checkAssign(ws[i]); err != nil {
			return err
		}
		i++
	}
	if i == len(ws) {
		return nil
	}
	return ck.checkProgram(ws[i:], 0)
}

// checkProgram checks one program invocation: ws[0] is the command word.
func (ck *checker) checkProgram(ws []*word, depth int) error {
	cmd := ws[0]
	if cmd.hasPH {
		return ck.errAt(cmd.pos, "placeholder in command position: an argument may not choose the program to run")
	}
	if cmd.fromData {
		return ck.errAt(cmd.pos, "the program to run here is filled in from data at run time (xargs or find -exec), which an argument can reach")
	}
	args := ws[1:]
	name, ok := literal(cmd)
	if !ok || cmd.glob || cmd.bracket && strings.Contains(name, "]") {
		// The program is only known when the command runs ($PROG, a glob),
		// so what its arguments mean cannot be checked.
		for _, w := range args {
			if w.hasPH {
				return ck.errAt(w.pos, "the program here is chosen when the command runs (an expansion or a glob), so its arguments cannot be checked; name the program literally")
			}
		}
		markDD(args)
		return nil
	}
	if err := ck.checkCodeOptions(path.Base(name), args); err != nil {
		return err
	}
	if plusCommands[path.Base(name)] {
		for _, w := range args {
			w.plusRule = true
		}
	}
	p := shellsyntax.GrammarOf(name)
	if p == nil || depth > 32 {
		markDD(args)
		return nil
	}
	kind := kindOf(p)
	if kind == wrapper {
		_, _, shellFlag, err := ck.walkOptions(name, p, args)
		if err != nil {
			return err
		}
		if shellFlag {
			// sudo -s, doas -s: a shell runs the command line.
			kind = remote
		}
	}
	switch kind {
	case wrapper:
		first, _, _, err := ck.walkOptions(name, p, args)
		if err != nil {
			return err
		}
		for n := 0; n < p.Leading && first < len(args); n++ {
			first++
		}
		markDD(args[:first])
		if first >= len(args) {
			return nil
		}
		inner := args[first:]
		if name == "xargs" || strings.HasSuffix(name, "/xargs") {
			inner = ck.xargsData(p, args[:first], inner, cmd)
		}
		return ck.checkProgram(inner, depth+1)
	case eval:
		switch name {
		case "let":
			ck.arith(cmd.pos, "let")
		case "alias":
			ck.define(cmd.pos, "an alias")
		}
		for _, w := range args {
			if ck.tainted(w) {
				return ck.errAt(w.pos, "%s evaluates its arguments as shell code; no argument or expansion may be one", name)
			}
		}
		return nil
	case source:
		markDD(args)
		if len(args) > 0 && ck.scriptTainted(args[0]) {
			return ck.errAt(args[0].pos, "placeholder as the script %s runs: an argument may not choose code to run", name)
		}
		return nil
	case names:
		first, _, _, err := ck.walkOptions(name, p, args)
		if err != nil {
			return err
		}
		for _, w := range args[first:] {
			if ck.tainted(w) {
				return ck.errAt(w.pos, "%s takes variable names, and bash evaluates a name's subscript as code; a name may not come from an argument", name)
			}
		}
		return nil
	case declare, export:
		if kind == declare {
			ck.arith(cmd.pos, name)
		}
		for _, w := range args {
			lit, isLit := literal(w)
			if isLit && strings.HasPrefix(lit, "-") || isLit && strings.HasPrefix(lit, "+") {
				if strings.ContainsAny(lit[1:], "inaA") {
					ck.arith(w.pos, name+" "+lit)
				}
				continue
			}
			if err := ck.checkAssign(w); err != nil {
				return err
			}
			if w.assign == "" && ck.tainted(w) {
				return ck.errAt(w.pos, "%s takes variable names, and bash evaluates a name's subscript as code; a name may not come from an argument", name)
			}
		}
		return nil
	case printf:
		markDD(args)
		for k := 0; k+1 < len(args); k++ {
			if lit, ok := literal(args[k]); ok && lit == "-v" {
				if ck.tainted(args[k+1]) {
					return ck.errAt(args[k+1].pos, "printf -v takes a variable name, and bash evaluates its subscript as code; it may not come from an argument")
				}
			}
			if lit, ok := literal(args[k]); !ok || !strings.HasPrefix(lit, "-") {
				break
			}
		}
		return nil
	case test:
		markDD(args)
		for k := 0; k+1 < len(args); k++ {
			if lit, ok := literal(args[k]); ok && (lit == "-v" || lit == "-R") {
				if ck.tainted(args[k+1]) {
					return ck.errAt(args[k+1].pos, "test %s takes a variable name, and bash evaluates its subscript as code; it may not come from an argument", lit)
				}
			}
		}
		return nil
	case curl:
		markDD(args)
		for _, w := range args {
			if !w.afterDD {
				w.fileRule = true
			}
		}
		return ck.checkCurl(args)
	case find:
		markDD(args)
		for k := 0; k < len(args); k++ {
			lit, ok := literal(args[k])
			if !ok || (lit != "-exec" && lit != "-execdir" && lit != "-ok" && lit != "-okdir") {
				continue
			}
			end := k + 1
			for end < len(args) {
				if t, ok := literal(args[end]); ok && (t == ";" || t == "+") {
					break
				}
				end++
			}
			if k+1 < end {
				if ck.hasArgs {
					for _, w := range args[k+1 : end] {
						if strings.Contains(litOf(w), "{}") {
							w.fromData = true
						}
					}
				}
				if err := ck.checkProgram(args[k+1:end], depth+1); err != nil {
					return err
				}
			}
			k = end
		}
		return nil
	case remote:
		first, _, _, err := ck.walkOptions(name, p, args)
		if err != nil {
			return err
		}
		markDD(args[:first])
		first += p.Leading
		for k := first; k < len(args); k++ {
			if args[k].hasPH {
				return ck.errAt(args[k].pos, "%s passes these words to a shell as a command line, so no argument may be one", name)
			}
		}
		return nil
	case interp:
		first, programGiven, codeFlag, stdin, err := ck.walkOptionsStdin(name, p, args)
		if err != nil {
			return err
		}
		if err := ck.checkPositionalCode(name, p, args); err != nil {
			return err
		}
		markDD(args)
		if programGiven {
			return nil
		}
		if stdin && !codeFlag && ck.hasArgs {
			return ck.errAt(cmd.pos, "%s reads its program from standard input here, which can carry an argument's value; give it a script or code", name)
		}
		if first >= len(args) {
			if !codeFlag && !p.Permute && ck.hasArgs {
				return ck.errAt(cmd.pos, "%s reads its program from standard input here, which can carry an argument's value; give it a script or code", name)
			}
			return nil
		}
		w := args[first]
		if codeFlag || p.Permute {
			if ck.tainted(w) {
				return ck.errAt(w.pos, "the first operand of %s here is code; it may not come from an argument or an expansion", name)
			}
			return nil
		}
		if ck.scriptTainted(w) {
			return ck.errAt(w.pos, "the first operand of %s is the script it runs; an argument may not choose code to run", name)
		}
		return nil
	default: // opts
		_, _, _, err := ck.walkOptions(name, p, args)
		markDD(args)
		return err
	}
}

// walkOptions reads the options of a program. It returns the index of the
// first operand (len(args) when there is none), whether an option supplied
// the program (awk -f, sed -e, python -c) and whether a flag made the first
// operand code (sh -c). A code option's argument may hold no placeholder
// and no expansion. For permuting programs, options after operands are
// read too, and first is the first operand.
func (ck *checker) walkOptions(name string, p *shellsyntax.Grammar, args []*word) (first int, programGiven, codeFlag bool, err error) {
	first, programGiven, codeFlag, _, err = ck.walkOptionsStdin(name, p, args)
	return first, programGiven, codeFlag, err
}

// walkOptionsStdin is walkOptions that also reports a flag making the
// program read its program from standard input (sh -s).
func (ck *checker) walkOptionsStdin(name string, p *shellsyntax.Grammar, args []*word) (first int, programGiven, codeFlag, stdin bool, err error) {
	first = -1
	text := func(i int) (string, bool) { return literal(args[i]) }
	isAssign := func(i int) bool { return args[i].assign != "" }
	for o := range p.Options(0, len(args), text, isAssign) {
		opt := "-" + o.Name
		if o.Long {
			opt = "-" + opt
		}
		switch o.Kind {
		case shellsyntax.OptEnd:
			if first < 0 {
				first = o.Word + 1
			}
		case shellsyntax.OptOperand:
			if first < 0 {
				first = o.Word
			}
		case shellsyntax.OptAssign:
			if err := ck.checkAssign(args[o.Word]); err != nil {
				return 0, false, false, false, err
			}
		case shellsyntax.OptShell:
			codeFlag = true
		case shellsyntax.OptStdin:
			stdin = true
		case shellsyntax.OptCode, shellsyntax.OptMod, shellsyntax.OptSplit:
			programGiven = true
			if o.ValueWord >= 0 && ck.tainted(args[o.ValueWord]) {
				return 0, false, false, false, ck.errAt(args[o.ValueWord].pos, "the argument of %s %s is code (or picks code to run); it may not come from an argument or an expansion", name, opt)
			}
		case shellsyntax.OptProg:
			programGiven = true
			if o.ValueWord >= 0 && ck.scriptTainted(args[o.ValueWord]) {
				return 0, false, false, false, ck.errAt(args[o.ValueWord].pos, "the argument of %s %s is the program it runs; an argument may not choose it", name, opt)
			}
		}
	}
	if first < 0 {
		first = len(args)
	}
	return first, programGiven, codeFlag, stdin, nil
}

// xargsData marks what xargs fills in from its input, which an argument
// can reach through a pipe: with -I/-i/--replace, the words of the command
// holding the replacement string; otherwise one more operand at the end.
func (ck *checker) xargsData(p *shellsyntax.Grammar, opts, inner []*word, at *word) []*word {
	if !ck.hasArgs {
		return inner
	}
	repl := ""
	text := func(i int) (string, bool) { return literal(opts[i]) }
	for o := range p.Options(0, len(opts), text, nil) {
		switch {
		case o.Name == "I" && o.ValueWord >= 0:
			repl, _ = literal(opts[o.ValueWord])
		case o.Name == "I":
			repl = o.Value
		case o.Name == "i" || o.Name == "replace":
			repl = "{}"
			if o.Attached {
				repl = o.Value
			}
		}
	}
	if repl != "" {
		for _, w := range inner {
			if strings.Contains(litOf(w), repl) {
				w.fromData = true
			}
		}
		return inner
	}
	return append(append([]*word(nil), inner...), &word{pos: at.pos, fromData: true})
}

// markDD marks the words after the first literal "--": the program reads
// them as operands, so a value starting with "-" is safe there.
func markDD(args []*word) {
	seen := false
	for _, w := range args {
		if seen {
			w.afterDD = true
			continue
		}
		if lit, ok := literal(w); ok && lit == "--" {
			seen = true
		}
	}
}
