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
	"slices"
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// leadWords are reserved words after which a command starts.
var leadWords = shellsyntax.WordSet(`if then else elif do while until ! {`)

// noCommand are reserved words after which no command word follows in
// the same simple command.
var noCommand = shellsyntax.WordSet(`for select case function in esac fi done } ]] [[`)

// cmdWords are a command's words as the reader (policy/shellsyntax) sees
// them: a word with a placeholder or an expansion is not known; of one
// with a placeholder, the text before it is.
type cmdWords []*word

func (ws cmdWords) Len() int            { return len(ws) }
func (ws cmdWords) IsAssign(i int) bool { return ws[i].assign != "" }

func (ws cmdWords) Text(i int) (string, bool) {
	w := ws[i]
	if !w.hasPH || w.expand {
		return literal(w)
	}
	// The text before its first placeholder (a let expression has no pieces).
	first := slices.IndexFunc(w.pieces, func(p piece) bool { return p.ph >= 0 })
	return litOf(w.pieces[:max(first, 0)]), false
}

// msgNames refuses a variable name (a program's %s) from an argument.
const msgNames = "%s takes variable names, and bash evaluates a name's subscript as code; a name may not come from an argument"

// refuseAny refuses the first of ws that bad picks out.
func (ck *checker) refuseAny(ws []*word, bad func(*word) bool, format string, args ...any) error {
	if i := slices.IndexFunc(ws, bad); i >= 0 {
		return ck.errAt(ws[i].pos, format, args...)
	}
	return nil
}

func hasPH(w *word) bool { return w.hasPH }

// checkRules applies the command rules to every command of the template.
func (ck *checker) checkRules() error {
	if err := ck.checkBash(); err != nil {
		return err
	}
	for _, c := range slices.Concat(ck.cmds, ck.nested) {
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
	lit, ok := literal(w)
	stdin := ok && (lit == "-" || slices.ContainsFunc(stdinPaths, func(p string) bool { return strings.HasPrefix(lit, p) }))
	return w.hasPH || w.fromData || ck.hasArgs && (w.procSubst || stdin)
}

// stdinPaths start the paths of standard input or a pipe.
var stdinPaths = []string{"/dev/stdin", "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"}

// checkAssign refuses a placeholder in the value of an environment variable
// that programs read as code, as a place to load code from, or as a
// command: PATH=..., LD_PRELOAD=..., GIT_SSH_COMMAND=..., PYTHONPATH=...
func (ck *checker) checkAssign(w *word) error {
	if w.assign != "" && w.hasPH && CodeEnv(w.assign) {
		return ck.errAt(w.pos, "an argument may not set %s: programs read it as code, a command or a place to load code from", w.assign)
	}
	return nil
}

// checkCommand finds the command word of a simple command and checks it.
func (ck *checker) checkCommand(words []*word) error {
	// Redirection targets and here-document delimiters are not operands.
	ws := slices.DeleteFunc(slices.Clone(words), func(w *word) bool { return w.redir })
	// The command word comes after the reserved words that lead to one.
	i := slices.IndexFunc(ws, func(w *word) bool {
		lit, ok := literal(w)
		return !ok || w.quoted || !leadWords[lit]
	})
	if i < 0 {
		return nil
	}
	if lit, ok := literal(ws[i]); ok && !ws[i].quoted && noCommand[lit] {
		return nil
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
// What the program does with its words is the reader's (policy/shellsyntax,
// read.go); this refuses a placeholder where it would choose what runs.
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
		markDD(args)
		return ck.refuseAny(args, hasPH, "the program here is chosen when the command runs (an expansion or a glob), so its arguments cannot be checked; name the program literally")
	}
	if err := ck.checkSQLOperands(path.Base(name), args); err != nil {
		return err
	}
	if plusCommands[path.Base(name)] {
		for _, w := range args {
			w.plusRule = true
		}
	}
	r := shellsyntax.Read(cmdWords(ws))
	g := r.G
	if g == nil || depth > 32 {
		markDD(args)
		return nil
	}
	opts := r.Opts[:r.Tail]
	if g.Role == shellsyntax.RoleWrapper {
		// Options after the leading operands are options too (ansible
		// HOSTS -a CMD, gcloud compute ssh VM --command CMD); su's and
		// flock's are refused with the words they pass to a shell.
		opts = r.Opts
	}
	if err := ck.checkOptions(name, g, ws, opts); err != nil {
		return err
	}
	if g.OperandForms != "" {
		// Its operands, not its options' values (dig -t TYPE, ps -o FMT).
		for i, w := range ws[1:] {
			if !slices.ContainsFunc(r.Opts, func(o shellsyntax.Opt) bool { return o.ValueWord == i+1 }) {
				w.forms, w.prog = g.OperandForms, path.Base(name)
			}
		}
	}
	switch g.Role {
	case shellsyntax.RoleEval:
		switch name {
		case "let":
			ck.arith(cmd.pos, "let")
		case "alias":
			ck.define(cmd.pos, "an alias")
		}
		return ck.refuseAny(args, ck.tainted, "%s evaluates its arguments as shell code; no argument or expansion may be one", name)
	case shellsyntax.RoleSource:
		markDD(args)
		if r.Script >= 0 && ck.scriptTainted(ws[r.Script]) {
			return ck.errAt(ws[r.Script].pos, "placeholder as the script %s runs: an argument may not choose code to run", name)
		}
		return nil
	case shellsyntax.RoleNames:
		return ck.refuseAny(ws[r.Operand:], ck.tainted, msgNames, name)
	case shellsyntax.RoleDeclare, shellsyntax.RoleExport:
		if g.Role == shellsyntax.RoleDeclare {
			ck.arith(cmd.pos, name)
		}
		for _, w := range args {
			if lit, ok := literal(w); ok && lit != "" && (lit[0] == '-' || lit[0] == '+') {
				if strings.ContainsAny(lit[1:], "inaA") {
					ck.arith(w.pos, name+" "+lit)
				}
				continue
			}
			if err := ck.checkAssign(w); err != nil {
				return err
			}
			if w.assign == "" && ck.tainted(w) {
				return ck.errAt(w.pos, msgNames, name)
			}
		}
		return nil
	case shellsyntax.RolePrintf, shellsyntax.RoleTest:
		// printf -v NAME among its leading options; test -v NAME or -R
		// NAME anywhere.
		markDD(args)
		prog := "test"
		if g.Role == shellsyntax.RolePrintf {
			prog = "printf"
		}
		for k := 0; k+1 < len(args); k++ {
			lit, ok := literal(args[k])
			if ok && (lit == "-v" || lit == "-R" && prog == "test") && ck.tainted(args[k+1]) {
				return ck.errAt(args[k+1].pos, "%s %s takes a variable name, and bash evaluates its subscript as code; it may not come from an argument", prog, lit)
			}
			if prog == "printf" && (!ok || !strings.HasPrefix(lit, "-")) {
				break
			}
		}
		return nil
	case shellsyntax.RoleCurl:
		markDD(args)
		return ck.checkCurl(args)
	case shellsyntax.RoleFind:
		markDD(args)
		for _, ex := range r.Exec {
			inner := ws[ex[0]:ex[1]]
			ck.markData(inner, "{}")
			if err := ck.checkProgram(inner, depth+1); err != nil {
				return err
			}
		}
		return nil
	case shellsyntax.RoleShell, shellsyntax.RoleInterp:
		return ck.checkInterp(name, r, ws)
	}
	switch {
	case g.Role == shellsyntax.RoleSu || g.Join || g.CmdLine || r.ShellFlag:
		// The words after the leading operands are a shell command line
		// (ssh, watch even with -x, sudo -s, su USER...), or, with
		// runuser -u, a command: refused whole.
		markDD(ws[1:r.Operand])
		from := r.Rest
		if r.Cmd >= 0 {
			from = min(from, r.Cmd)
		}
		return ck.refuseAny(ws[from:], hasPH, "%s passes these words to a shell as a command line, so no argument may be one", name)
	case r.Cmd >= 0:
		markDD(ws[1:r.Rest])
		inner := ws[r.Cmd:]
		if g.Role == shellsyntax.RoleXargs {
			inner = ck.xargsData(r.Replace, inner, cmd)
		}
		return ck.checkProgram(inner, depth+1)
	case g.Role == shellsyntax.RoleWrapper || g.Role == shellsyntax.RoleXargs:
		markDD(ws[1:r.Rest])
	default:
		markDD(args)
	}
	return nil
}

// checkInterp refuses a placeholder as a shell's or an interpreter's
// program: its code, its script, or standard input that can carry one.
func (ck *checker) checkInterp(name string, r shellsyntax.Reading, ws []*word) error {
	if err := ck.checkPositionalCode(name, r, ws); err != nil {
		return err
	}
	markDD(ws[1:])
	switch {
	case r.Code >= 0:
		if ck.tainted(ws[r.Code]) {
			return ck.errAt(ws[r.Code].pos, "the first operand of %s here is code; it may not come from an argument or an expansion", name)
		}
	case r.Program:
	case r.Stdin && !r.G.ProgArg:
		if ck.hasArgs {
			return ck.errAt(ws[0].pos, "%s reads its program from standard input here, which can carry an argument's value; give it a script or code", name)
		}
	case !r.ShellFlag && r.Operand < len(ws) && ck.scriptTainted(ws[r.Operand]):
		// The first operand as written: a lone "-" (which a shell skips)
		// is standard input.
		return ck.errAt(ws[r.Operand].pos, "the first operand of %s is the script it runs; an argument may not choose code to run", name)
	}
	return nil
}

// checkOptions refuses a placeholder or an expansion as the value of an
// option that is code, or picks the code or the program to run, and
// checks the NAME=value words among the options.
func (ck *checker) checkOptions(name string, g *shellsyntax.Grammar, ws []*word, opts []shellsyntax.Opt) error {
	for _, o := range opts {
		if o.Kind == shellsyntax.OptAssign {
			if err := ck.checkAssign(ws[o.Word]); err != nil {
				return err
			}
			continue
		}
		v := o.ValueWord // the value's word: the next, or the option's own
		if o.Attached {
			v = o.Word
		}
		if v < 0 || o.Kind != shellsyntax.OptProg && !ck.tainted(ws[v]) || o.Kind == shellsyntax.OptProg && !ck.scriptTainted(ws[v]) {
			continue
		}
		opt := "-" + o.Name
		if o.Long {
			opt = "-" + opt
		}
		switch {
		case o.Kind == shellsyntax.OptCode || o.Kind == shellsyntax.OptMod || o.Kind == shellsyntax.OptSplit:
			return ck.errAt(ws[v].pos, "the argument of %s %s is code (or picks code to run); it may not come from an argument or an expansion", name, opt)
		case o.Kind == shellsyntax.OptProg:
			return ck.errAt(ws[v].pos, "the argument of %s %s is the program it runs; an argument may not choose it", name, opt)
		case g.Role == shellsyntax.RoleXargs && (o.Name == "I" || o.Name == "i" || o.Name == "replace"):
			// Input items replace this string in xargs' command, its
			// program name included.
			return ck.errAt(ws[v].pos, "xargs fills its input in where its command holds %s %s's value, the program name too; it may not come from an argument", name, opt)
		}
	}
	return nil
}

// xargsData marks what xargs fills in from its input, which an argument
// can reach through a pipe: with -I/-i/--replace, the words of the command
// holding the replacement string; otherwise one more operand at the end.
func (ck *checker) xargsData(repl string, inner []*word, at *word) []*word {
	switch {
	case repl != "":
		ck.markData(inner, repl) // (only in a template with arguments)
	case ck.hasArgs:
		return append(slices.Clone(inner), &word{pos: at.pos, fromData: true})
	}
	return inner
}

// markData marks, in a template with arguments, the words holding repl,
// which xargs or find -exec replaces with data an argument can reach.
func (ck *checker) markData(ws []*word, repl string) {
	for _, w := range ws {
		if ck.hasArgs && strings.Contains(litOf(w.pieces), repl) {
			w.fromData = true
		}
	}
}

// markDD marks the words after the first literal "--": the program reads
// them as operands, so a value starting with "-" is safe there.
func markDD(args []*word) {
	if i := slices.IndexFunc(args, func(w *word) bool { lit, ok := literal(w); return ok && lit == "--" }); i >= 0 {
		for _, w := range args[i+1:] {
			w.afterDD = true
		}
	}
}
