package shellsyntax

import (
	"slices"
	"strings"
)

// The reader: what a program does with the words of one command line,
// read against its grammar. The deny rules (policy/shellguard) follow what
// it finds (walk the code, run the command, track the data); the template
// check (policy/template) refuses a placeholder in those places. Neither
// reads a program's command line on its own.
//
// Where the two earlier readings disagreed, each engine keeps the stricter
// (pinned in both packages' grammar_test.go): a module option (perl -M,
// node -r) does not give the program, but python -m does; awk's program
// text comes before its options; a shell skips a lone "-" (sh -c - CODE),
// an interpreter reads standard input for it (python -); deno eval runs
// code; env takes any NAME=value; options follow flock's file and su's
// user; runuser -u runs a command. The template check alone still counts
// a shell's "-" as standard input, su's "-" as its user and watch -x as
// joining; the deny rules alone skip what sudo -l names. A word known
// only in part (a template's --to-command={{x}}) is read as the code
// option it starts with (Options, partial).

// Words is one command line as the reader sees it: word 0 is the program.
type Words interface {
	Len() int
	// Text is word i's text and whether it is known before the command
	// runs; when it is not, the text is what is known of its start.
	Text(i int) (string, bool)
	// IsAssign reports whether word i is a NAME=value assignment.
	IsAssign(i int) bool
}

// Reading is what a program does with its words. Indices count words from
// the program (word 0); -1 is no word.
type Reading struct {
	G *Grammar // nil: a program the table does not know
	// Opts are its options (and NAME=value words among them) in order;
	// Opts[Tail:] were read after its leading operands (su USER -c TEXT,
	// flock FILE -c TEXT).
	Opts      []Opt
	Tail      int
	Operand   int  // the first operand, after the options and "--"; Len() when none
	Rest      int  // the first word after the leading operands (timeout's duration)
	ShellFlag bool // a flag makes the operands shell text (sh -c, sudo -s)
	NoExec    bool // a flag after which nothing runs (sudo -l)
	// Cmd is the first word of the command it runs (a wrapper's, xargs',
	// runuser -u's, git's subcommand); Line, the first of the words it joins
	// into a shell command line (sudo -s, ssh, watch, sg, eval).
	Cmd, Line int
	// Code is the operand that is code (sh -c CODE, awk PROG, deno eval
	// CODE, trap CODE); Script, the operand naming the script it runs
	// (sh FILE, python -, source FILE).
	Code, Script int
	Stdin        bool // it reads its program from standard input
	Program      bool // an option gives the program (python -c, awk -f, python -m)
	Args         int  // the first word its program gets as an argument ($1, sys.argv[1])
	// Replace is the string xargs -I/-i fills in with each input item.
	Replace string
	Exec    [][2]int // find: the words [from, to) of each -exec command
}

// Read reads what the program w names does with its words.
func Read(w Words) Reading {
	n := w.Len()
	r := Reading{Operand: n, Rest: n, Cmd: -1, Line: -1, Code: -1, Script: -1, Args: n}
	name, ok := w.Text(0)
	g := GrammarOf(name)
	if !ok || g == nil {
		return r
	}
	r.G = g
	base := strings.ToLower(name[strings.LastIndexByte(name, '/')+1:])
	switch g.Role {
	case RoleSource:
		if n > 1 {
			r.Script, r.Args = 1, 2
		}
		return r
	case RoleFind:
		r.readExec(w)
		return r
	}
	from, verb := 1, ""
	if n > 1 {
		verb = lit(w, 1)
	}
	if slices.Contains(g.Verbs, verb) {
		from = 2 // deno run FILE, deno eval CODE
	}
	r.Operand = r.walk(g, w, from, base)
	for g.Subs != nil && !g.Subcommand {
		// A verb picks the grammar of the rest (docker exec); a
		// subcommand is the command git runs (Cmd, below).
		var sub *Grammar
		if r.Operand < n {
			sub = g.Verb(lit(w, r.Operand))
		}
		if sub == nil {
			r.Rest, r.Tail = r.Operand, len(r.Opts)
			return r
		}
		g, r.G = sub, sub
		r.Operand = r.walk(g, w, r.Operand+1, base)
	}
	r.Rest, r.Tail = r.Operand, len(r.Opts)
	switch g.Role {
	case RoleShell, RoleInterp:
		r.readProgram(g, w, from == 2 && verb == "eval")
	case RoleEval:
		switch {
		case base == "eval":
			r.Line = 1 // (an empty line when its words are all unknown)
		case base == "trap" && r.Operand+1 < n && lit(w, r.Operand) != "-":
			r.Code = r.Operand // trap CODE SIGNAL... (trap - SIGNAL resets)
		}
	case RoleWrapper, RoleXargs, RoleSu, RolePlain:
		r.readCommand(g, w, base)
	}
	return r
}

// walk reads the options from word from on and returns the first operand.
func (r *Reading) walk(g *Grammar, w Words, from int, base string) int {
	first := w.Len()
	isAssign := func(i int) bool {
		if w.IsAssign(i) {
			return true
		}
		// env sets any NAME=value, whatever the name.
		t, ok := w.Text(i)
		return ok && base == "env" && strings.IndexByte(t, '=') > 0
	}
	for o := range g.Options(w, from, isAssign) {
		switch o.Kind {
		case OptEnd, OptOperand:
			first = min(first, o.Rest())
			continue
		case OptShell:
			r.ShellFlag = true
		case OptCode, OptProg:
			r.Program = true
		case OptMod:
			// python -m runs the module as the program.
			r.Program = r.Program || g.Lang == "python" && !o.Long
		}
		r.NoExec = r.NoExec || o.NoExec
		r.Opts = append(r.Opts, o)
	}
	return first
}

// has reports whether an option of kind k was read.
func (r *Reading) has(k OptKind) bool {
	return slices.ContainsFunc(r.Opts, func(o Opt) bool { return o.Kind == k })
}

// readProgram finds a shell's or an interpreter's program: code in an
// option, a code operand (sh -c, awk), a script, or standard input.
// codeVerb: the program's verb makes its first operand code (deno eval).
func (r *Reading) readProgram(g *Grammar, w Words, codeVerb bool) {
	n := w.Len()
	op := r.Operand
	if g.Role == RoleShell && op < n && lit(w, op) == "-" {
		op++ // a shell ignores a lone "-" (interpreters read standard input)
	}
	// awk reads options only before its program text: a program option
	// after it is an argument.
	progBefore := slices.ContainsFunc(r.Opts, func(o Opt) bool {
		return o.Word < op && (o.Kind == OptCode || o.Kind == OptProg)
	})
	switch {
	case op < n && (r.ShellFlag || codeVerb || g.ProgArg && !progBefore):
		r.Code, r.Args = op, op+1
	case r.ShellFlag || r.Program:
		r.Args = op
	case op < n && !r.has(OptStdin):
		r.Script, r.Args = op, op+1
	default:
		r.Stdin, r.Args = true, op
	}
}

// readCommand finds the command a wrapper runs, or the command line it
// joins, after its options and leading operands.
func (r *Reading) readCommand(g *Grammar, w Words, base string) {
	n := w.Len()
	r.Rest = min(r.Operand+g.Leading, n)
	if base == "runuser" && slices.ContainsFunc(r.Opts, func(o Opt) bool { return o.Name == "u" }) {
		if r.Operand < n {
			r.Cmd = r.Operand // runuser -u USER COMMAND...
		}
		return
	}
	cmd := r.Rest
	if g.Leading > 0 && (g.CodeOpts != "" || len(g.CodeLong) > 0 || g.OptsAfter) {
		// Options after the leading operands: su USER -c TEXT, flock
		// FILE -c TEXT, ssh HOST -t CMD, kubectl exec POD -c C -- CMD; su
		// reads them among its operands too, and a lone
		// "-" before its user is a flag (Rest counts it as the user, which
		// the template check keeps, refusing more).
		cmd = n
		k := r.Rest
		if g.Role == RoleSu && r.Operand < n && lit(w, r.Operand) == "-" {
			k++
		}
		for k < n {
			first := r.walk(g, w, k, base)
			cmd = min(cmd, first)
			if g.Role != RoleSu || first >= n {
				break
			}
			k = first + 1
		}
	}
	if cmd >= n {
		return
	}
	switch {
	case g.Role == RoleSu:
		if base == "sg" {
			r.Line = cmd
		}
	case r.ShellFlag || g.Join && !r.has(OptJoinOff):
		r.Line = cmd
	case g.Role != RolePlain || g.Subcommand:
		r.Cmd = cmd
	}
	if g.Role == RoleXargs {
		for _, o := range r.Opts {
			switch {
			case o.Name == "I" && o.ValueWord >= 0:
				r.Replace = lit(w, o.ValueWord)
			case o.Name == "I":
				r.Replace = o.Value
			case o.Name == "i" || o.Name == "replace":
				r.Replace = "{}"
				if o.Attached {
					r.Replace = o.Value
				}
			}
		}
	}
}

// readExec finds the commands of find's -exec, -execdir, -ok and -okdir.
func (r *Reading) readExec(w Words) {
	n := w.Len()
	for k := 1; k < n; k++ {
		if !slices.Contains([]string{"-exec", "-execdir", "-ok", "-okdir"}, lit(w, k)) {
			continue
		}
		end := k + 1
		for ; end < n; end++ {
			if t, ok := w.Text(end); ok && (t == ";" || t == "+") {
				break
			}
		}
		if k+1 < end {
			r.Exec = append(r.Exec, [2]int{k + 1, end})
		}
		k = end
	}
}

// lit is word i's text when it is known, or "".
func lit(w Words, i int) string {
	if t, ok := w.Text(i); ok {
		return t
	}
	return ""
}
