package template

// The shell template check. A template is parsed by mvdan.cc/sh, the
// parser the deny rules use, with each placeholder replaced by a marker word
// of the same length (so the tree's offsets are the template's), the way
// html/template decides contexts on a parse tree. The walk over the tree
// reports three things:
//
//   - where each placeholder lands. The renderer single-quotes every value,
//     which is only sound where an unquoted word is being read. Inside
//     quotes, command substitutions, ${…}, arithmetic, [[ … ]], comments and
//     here-documents a quoted value is not one literal word (in a comment a
//     newline in the value ends the comment; in a here-document or double
//     quotes the quote marks are literal and $(…) in the value runs), so a
//     placeholder there is refused. So is one right after "\" or "$", which
//     would swallow or reinterpret the opening quote.
//   - whether the template needs a shell at all, or is one simple command
//     that can run as an argv.
//   - the words of each simple command, for the command-level rules in
//     shell_rules.go.
//
// Where shells disagree, the check refuses rather than guesses, because a
// wrong guess about quoting is exactly an injection: case inside $(…),
// quotes inside ${…}, $'…' (bash lets \' escape a quote in it, older dash
// does not), here-documents inside $(…), line continuations in
// here-documents, and, in an unquoted here-document body, an expansion left
// open at the end of a line (dash and busybox parse $(…) in a body across
// lines, past the delimiter line bash stops at, so what bash runs as
// commands they read as the body). Text bash refuses is read as POSIX (the
// shell that runs a template is sh).

import (
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// piece is a run of literal text (ph < 0), after quote removal, or one
// placeholder.
type piece struct {
	lit string
	ph  int
}

// word is one shell word. (The strings come first and the flags last, so
// that the flags pack into one machine word.)
type word struct {
	pieces []piece
	pos    int // byte offset of its first character
	// assign is NAME for a NAME=value (or NAME+=value) assignment word.
	assign string
	// curlOpt is the curl option it is the value of, "--url" for a URL
	// operand: a value starting with @ or < would name a file to read (set
	// by the rules pass).
	curlOpt string

	hasPH   bool // holds a placeholder
	expand  bool // holds a $… or `…` expansion
	quoted  bool // some part was quoted or escaped
	glob    bool // holds an unquoted *, ?, { or }
	bracket bool // holds an unquoted [
	redir   bool // the target of a redirection or a here-document's delimiter: not an operand

	procSubst bool // holds a <(…) or >(…) process substitution (bash)
	fromData  bool // filled from data at run time: xargs -I / find -exec {} (set by the rules pass)
	afterDD   bool // follows the "--" that ends its program's options (set by the rules pass)
	plusRule  bool // a value starting with "+" would be a command (less +!cmd, vi +cmd)
	// forms: its program's Grammar.OperandForms (dig's "@+", rsync's ":"):
	// what a value starting the word may not be (set by the rules pass).
	forms string
	prog  string // that program's name, for the refusal
}

// markers holds the marker of a short placeholder, as its first bytes.
var markers = "\uE000" + strings.Repeat("_", 61)

// maxNesting bounds how deeply expansions may nest.
const maxNesting = 32

// checker walks one parsed shell template.
type checker struct {
	t       *Template
	src     string // the template with markers in place of placeholders
	hasArgs bool   // an argument placeholder (not only secrets)

	cmds   [][]*word // the words of simple commands outside substitutions
	nested [][]*word // commands inside $(…), `…`, <(…), for the rules pass
	loose  []*word   // words outside commands (for lists, case words)

	err   *Error // the refusal with the smallest offset
	shell bool   // only a shell understands this template

	arithPos   int // offset of the first bash arithmetic construct, or -1
	arithWhat  string
	definePos  int // offset of the first function definition, or -1
	defineWhat string
}

// place is where the walk is: what a placeholder there is refused as.
type place struct {
	msg    string // the refusal for a placeholder here; "" where a word is read
	locked bool   // inner contexts keep msg (a here-document body, `…`)
	subst  int    // command substitutions around
	nest   int    // expansions around
}

// in returns the place inside a construct whose placeholders are
// refused with msg.
func (cx place) in(msg string) place {
	if !cx.locked {
		cx.msg = msg
	}
	return cx
}

const (
	msgDQ    = "placeholder inside double quotes; write it unquoted: values are quoted for you"
	msgSQ    = "placeholder inside single quotes; write it unquoted: values are quoted for you"
	msgSubst = "placeholder inside a $(...) command substitution"
	msgTick  = "placeholder inside a `...` command substitution"
	msgParam = "placeholder inside ${...}"
	msgArith = "placeholder inside an arithmetic expression"
	msgCond  = "placeholder inside [[ ... ]]"
	msgHere  = "placeholder inside a here-document"
	msgDelim = "placeholder in a here-document delimiter"
	msgName  = "placeholder as a variable name: bash evaluates a name's subscript as code"
)

// check parses and walks t and applies the command rules. The error is a
// *Error.
func check(t *Template) (*checker, error) {
	c := &checker{t: t, arithPos: -1, definePos: -1, hasArgs: t.HasArgs()}
	// Placeholders are ASCII: only the literal text can hold these.
	for i, r := range t.src {
		if r == utf8.RuneError && !strings.HasPrefix(t.src[i:], "\uFFFD") {
			return nil, errorAt(t.src, i, "the command is not valid UTF-8")
		}
		if r == 0 {
			return nil, errorAt(t.src, i, "the command contains a NUL byte")
		}
	}
	// Each placeholder becomes a marker: a character no shell syntax uses,
	// padded to the placeholder's length so offsets stay the template's.
	// A carriage return is a word character to sh and bash, a blank to the
	// parser: it is read as another word character.
	c.src, _ = t.render(nil, func(_ int, ph Placeholder, _ any, _ bool) (string, error) {
		if n := ph.End - ph.Offset; n <= len(markers) {
			return markers[:n], nil
		}
		return "\uE000" + strings.Repeat("_", ph.End-ph.Offset-len("\uE000")), nil
	})
	c.src = strings.ReplaceAll(c.src, "\r", "\x01")
	// Left to the shell: a marker character written in the template (kept
	// out of argv mode, as before markers), a carriage return or a line
	// continuation.
	c.shell = strings.ContainsAny(t.src, "\uE000\uE001\r") || strings.Contains(c.src, "\\\n")
	if at := shellsyntax.DeepBrackets(c.src, 4*maxNesting); at >= 0 {
		// The parser backtracks on deep $(( nesting; text this deep is
		// refused before it is parsed.
		return nil, c.errAt(at, "expansions nest more than %d deep", maxNesting)
	}
	f, err := shellsyntax.ParseBashComments(c.src)
	if err != nil {
		// Text bash refuses is refused. Read as POSIX it may still show a
		// placeholder in a refused place (export {{x}}, which bash's
		// parser rejects as a name): that refusal is the clearer one.
		var perr error
		if f, perr = syntax.NewParser(syntax.Variant(syntax.LangPOSIX), syntax.KeepComments(true)).Parse(strings.NewReader(c.src), ""); perr != nil {
			return nil, c.parseErr(err)
		}
	}
	c.walk(f)
	if c.err != nil {
		return nil, c.err
	}
	if rerr := c.checkRules(); rerr != nil {
		return nil, rerr
	}
	if err != nil {
		return nil, c.parseErr(err)
	}
	return c, nil
}

// walk walks a parsed template.
func (c *checker) walk(f *syntax.File) {
	c.shell = c.shell || len(f.Stmts) != 1 // only one statement can be an argv
	for _, s := range f.Stmts {
		c.stmt(s, place{})
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if cm, ok := n.(*syntax.Comment); ok {
			c.shell = true
			c.failIn(cm, "placeholder inside a comment (a newline in the value would end the comment)")
		}
		return true
	})
}

func (c *checker) errAt(off int, format string, args ...any) *Error {
	return errorAt(c.t.src, off, format, args...)
}

// fail records a refusal; the first one in the text is reported.
func (c *checker) fail(off int, format string, args ...any) {
	if c.err == nil || off < c.err.Offset {
		c.err = c.errAt(off, format, args...)
	}
}

// phIn returns the offset of the first placeholder in [from, to).
func (c *checker) phIn(from, to int) (int, bool) {
	if i := slices.IndexFunc(c.t.phs, func(p Placeholder) bool { return p.Offset >= from && p.Offset < to }); i >= 0 {
		return c.t.phs[i].Offset, true
	}
	return 0, false
}

// phAt returns the index of the placeholder at offset off, or -1.
func (c *checker) phAt(off int) int {
	return slices.IndexFunc(c.t.phs, func(p Placeholder) bool { return p.Offset == off })
}

// failIn refuses any placeholder within n as msg.
func (c *checker) failIn(n syntax.Node, msg string) {
	if at, ok := c.phIn(off(n.Pos()), off(n.End())); ok {
		c.fail(at, "%s", msg)
	}
}

// refuse refuses any placeholder within n as msg (unless the place is
// locked to its own message).
func (c *checker) refuse(n syntax.Node, cx place, msg string) {
	c.failIn(n, cx.in(msg).msg)
}

// arith notes a bash construct that evaluates text as an arithmetic
// expression. Bash evaluates array subscripts inside such expressions, and
// variable contents recursively, so a value like a[$(cmd)] reaching one by
// any route (a variable, a command's output) runs cmd.
func (c *checker) arith(pos int, what string) {
	c.shell = true
	if c.arithPos < 0 {
		c.arithPos, c.arithWhat = pos, what
	}
}

// define notes a construct that gives words a meaning the rules cannot
// see: a function definition or an alias. A function body can run its
// arguments ("$@") or evaluate them, so a template with arguments may not
// define one.
func (c *checker) define(pos int, what string) {
	c.shell = true
	if c.definePos < 0 {
		c.definePos, c.defineWhat = pos, what
	}
}

func off(p syntax.Pos) int { return int(p.Offset()) }

func (c *checker) stmt(s *syntax.Stmt, cx place) {
	// Only a simple command without assignments can run as an argv.
	if call, ok := s.Cmd.(*syntax.CallExpr); !ok && s.Cmd != nil || ok && len(call.Assigns) > 0 ||
		s.Negated || s.Background || s.Coprocess || len(s.Redirs) > 0 || s.Semicolon.IsValid() {
		c.shell = true
	}
	var cmd []*word // nil, or a simple command's words (a call has one at least)
	switch x := s.Cmd.(type) {
	case *syntax.CallExpr:
		for _, a := range x.Assigns {
			cmd = append(cmd, c.assignWord(a, cx))
		}
		for _, w := range x.Args {
			cmd = append(cmd, c.argWord(w, cx))
		}
	case *syntax.DeclClause:
		cmd = []*word{keyword(x.Variant.ValuePos, x.Variant.Value)}
		for _, a := range x.Args {
			cmd = append(cmd, c.assignWord(a, cx))
		}
	case *syntax.LetClause:
		cmd = []*word{keyword(x.Let, "let")}
		for _, e := range x.Exprs {
			cmd = append(cmd, c.letWord(e, cx))
		}
	case *syntax.TimeClause:
		if x.Stmt == nil {
			cmd = []*word{keyword(x.Time, "time")}
		}
		c.compound(x, cx) // the timed statement
	case nil:
	default:
		c.compound(x, cx)
	}
	for _, r := range s.Redirs {
		if w := c.redirect(r, cx); cmd != nil {
			cmd = append(cmd, w)
		}
	}
	if cmd != nil {
		if cx.subst > 0 {
			c.nested = append(c.nested, cmd)
		} else {
			c.cmds = append(c.cmds, cmd)
		}
	}
}

// compound walks a command other than a simple one: its statements and
// its words outside commands (a for list, a case word and patterns) in
// order, with the constructs that need more caught on the way.
func (c *checker) compound(n syntax.Command, cx place) {
	syntax.Walk(n, func(m syntax.Node) bool {
		switch x := m.(type) {
		case *syntax.Stmt:
			c.stmt(x, cx)
			return false
		case *syntax.Word:
			// A word outside a simple command (a for list, a case word):
			// its placeholders still get the option rule.
			if wd := c.word(&word{}, x, cx); cx.subst == 0 {
				c.loose = append(c.loose, wd)
			}
			return false
		case *syntax.WordIter:
			c.failIn(x.Name, msgName)
		case *syntax.CoprocClause:
			if x.Name != nil {
				c.failIn(x.Name, msgName)
			}
			c.stmt(x.Stmt, cx)
			return false
		case *syntax.CaseClause:
			if cx.subst > 0 {
				// Kept from the hand-written lexer, which could not read a
				// case pattern's ")" inside $(…).
				c.fail(off(x.Case), "case inside $(...) is not supported in templates")
			}
		case *syntax.FuncDecl:
			pos := off(x.Position)
			if !x.RsrvWord && x.Name != nil {
				// NAME() or NAME (): the definition shows at its "(".
				pos = off(x.Name.End())
				if i := strings.IndexByte(c.src[pos:], '('); i >= 0 {
					pos += i
				}
			}
			c.define(pos, "a function definition")
		case *syntax.ArithmCmd, *syntax.CStyleLoop:
			c.arithm(x, cx, "((...))")
			return false
		case *syntax.TestClause:
			syntax.Walk(x.X, func(n syntax.Node) bool {
				switch t := n.(type) {
				case *syntax.Word:
					c.word(&word{}, t, cx.in(msgCond))
					return false
				case *syntax.BinaryTest:
					switch t.Op {
					case syntax.TsEql, syntax.TsNeq, syntax.TsLss, syntax.TsLeq, syntax.TsGtr, syntax.TsGeq:
						c.arith(off(t.OpPos), "an arithmetic comparison inside [[ ... ]]")
					}
				}
				return true
			})
			return false
		case *syntax.Block, *syntax.Subshell, *syntax.BinaryCmd, *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.TimeClause:
		case syntax.Command:
			c.fail(off(x.Pos()), "this shell construct is not supported in templates")
			return false
		}
		return true
	})
}

// arithm checks an arithmetic construct, noted as what for the bash
// arithmetic rule: no placeholder and no quotes inside; command
// substitutions in it are walked.
func (c *checker) arithm(n syntax.Node, cx place, what string) {
	c.arith(off(n.Pos()), what)
	if cx.nest >= maxNesting {
		c.fail(off(n.Pos()), "expansions nest more than %d deep", maxNesting)
		return
	}
	cx.nest++
	c.refuse(n, cx, msgArith)
	syntax.Walk(n, func(m syntax.Node) bool {
		switch x := m.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			c.fail(off(x.Pos()), "quotes inside an arithmetic expression are not supported in templates")
			return false
		case *syntax.CmdSubst:
			c.subst(&word{}, x, x.Stmts, cx)
			return false
		case *syntax.ParamExp:
			c.param(&word{}, x, cx)
			return false
		}
		return true
	})
}

// redirect walks a redirection; it returns the word it adds to its
// command (a target or a here-document delimiter).
func (c *checker) redirect(r *syntax.Redirect, cx place) *word {
	if r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc {
		return c.word(&word{redir: true}, r.Word, cx)
	}
	if cx.subst > 0 {
		c.fail(off(r.OpPos), "here-documents inside $(...) are not supported in templates")
	}
	c.failIn(r.Word, msgDelim)
	d := c.word(&word{redir: true}, r.Word, place{locked: true, msg: msgDelim})
	delim := litOf(d.pieces)
	if delim == "" || strings.ContainsAny(delim, "$`\n") || d.expand {
		c.fail(d.pos, "unsupported here-document delimiter %q", delim)
	}
	if r.Hdoc != nil {
		c.failIn(r.Hdoc, msgHere)
	}
	if r.Hdoc != nil && !d.quoted { // an unquoted body is expanded
		c.heredocLines(off(r.Hdoc.Pos()), off(r.Hdoc.End()))
		c.word(&word{}, r.Hdoc, place{locked: true, msg: msgHere, subst: cx.subst, nest: cx.nest})
	}
	return d
}

// heredocLines checks the lines of an unquoted here-document body,
// src[from:to]. Dash and busybox parse $(…), `…` and ${…} in a body with
// the full lexer, so one left open at the end of a line swallows the
// delimiter line and the body runs on, over lines bash would read as
// commands. Every expansion must therefore close on its own line, and no
// line may end in a continuation.
func (c *checker) heredocLines(from, to int) {
	for l := range strings.Lines(c.src[from:to]) {
		line := strings.TrimSuffix(l, "\n")
		if strings.HasSuffix(line, `\`) {
			c.fail(from, "a line continuation inside a here-document is not supported in templates")
		}
		if strings.ContainsAny(line, "$`") {
			if _, err := shellsyntax.ParseDocument(line); err != nil {
				c.fail(from+opener(line), "an expansion in a here-document must close on its own line in a template (%s)", parseText(err))
			}
		}
		from += len(l)
	}
}

// opener is the offset of the first unescaped $(, ${, $[ or ` in line.
func opener(line string) int {
	for i := 0; i < len(line); i++ {
		switch rest := line[i:]; {
		case rest[0] == '\\':
			i++
		case rest[0] == '`' || strings.HasPrefix(rest, "$(") || strings.HasPrefix(rest, "${") || strings.HasPrefix(rest, "$["):
			return i
		}
	}
	return 0
}

func parseText(err error) string {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		return pe.Text
	}
	return err.Error()
}

// parseErr turns a parse error into a refusal at the template's position,
// naming a placeholder in the construct left open where there is one.
func (c *checker) parseErr(err error) error {
	var pe syntax.ParseError
	if !errors.As(err, &pe) {
		return c.errAt(0, "the command does not parse: %v", err)
	}
	at := off(pe.Pos)
	rest := c.src[min(at, len(c.src)):]
	open := func(msg, unterminated string) error {
		if ph, ok := c.phIn(at+1, len(c.src)); ok {
			return c.errAt(ph, "%s", msg)
		}
		return c.errAt(at, "the command does not parse as shell: %s", unterminated)
	}
	switch {
	case strings.Contains(pe.Text, "without closing quote") || strings.Contains(pe.Text, "without matching"):
		switch {
		case strings.HasPrefix(rest, `"`):
			return open(msgDQ, "unterminated double quote")
		case strings.HasPrefix(rest, `'`):
			return open(msgSQ, "unterminated single quote")
		case strings.HasPrefix(rest, "`"):
			return open(msgTick, "unterminated `...` command substitution")
		case strings.HasPrefix(rest, "$'"):
			return c.errAt(at, "the command does not parse as shell: unterminated $'...'")
		case strings.HasPrefix(rest, "$(("), strings.HasPrefix(rest, "$["), strings.HasPrefix(rest, "(("):
			return open(msgArith, "unterminated arithmetic expression")
		case strings.HasPrefix(rest, "$("), strings.HasPrefix(rest, "<("), strings.HasPrefix(rest, ">("):
			return open(msgSubst, "unterminated $(...) command substitution")
		case strings.HasPrefix(rest, "${"):
			return open(msgParam, "unterminated ${...}")
		}
	case strings.Contains(pe.Text, "unclosed here-document"):
		delim := pe.Text
		if i, j := strings.IndexByte(delim, '`'), strings.LastIndexByte(delim, '`'); i >= 0 && j > i {
			delim = delim[i+1 : j]
		}
		d := at + len(rest) - len(strings.TrimLeft(strings.TrimLeft(rest, "<-"), " \t"))
		line, _, body := strings.Cut(c.src[d:], "\n")
		switch ph, ok := c.phIn(d, len(c.src)); {
		case ok && ph < d+len(line):
			return c.errAt(ph, msgDelim)
		case ok: // (only a body has text after the delimiter's line)
			return c.errAt(ph, msgHere)
		case !body:
			return c.errAt(d, "here-document has no body: it needs a newline and a closing %q line", delim)
		}
		return c.errAt(d, "here-document is not closed by a %q line", delim)
	case strings.Contains(pe.Text, "must be followed by"):
		op := strings.TrimLeft(rest, "0123456789")
		if o := strings.TrimLeft(op, "<>&|-"); len(o) < len(op) && strings.ContainsAny(op[:1], "<>&") {
			return c.errAt(len(c.src)-len(strings.TrimLeft(o, " \t")), "redirection without a target")
		}
	}
	return c.errAt(at, "the command does not parse as shell: %s", pe.Text)
}

// argWord builds a command's argument word. A word NAME=value or
// NAME[subscript]=value is an assignment to the programs that read one
// (env, sudo, export).
func (c *checker) argWord(w *syntax.Word, cx place) *word {
	wd := c.word(&word{}, w, cx)
	raw := c.src[off(w.Pos()):off(w.End())]
	i := 0
	for i < len(raw) && shellsyntax.IsNameByte(raw[i], i == 0) {
		i++
	}
	switch name, rest := raw[:i], raw[i:]; {
	case name == "":
	case strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, "+="):
		wd.assign = name
	case strings.HasPrefix(rest, "[") && (strings.Contains(rest, "]=") || strings.Contains(rest, "]+=")):
		wd.assign = name
		c.arith(wd.pos, "an array assignment NAME[subscript]=")
	}
	return wd
}

// keyword is the word of a keyword that stands as a command's name
// (declare, let, time).
func keyword(pos syntax.Pos, name string) *word {
	return &word{pos: off(pos), pieces: []piece{{lit: name, ph: -1}}}
}

// assignWord builds the word of an assignment, NAME=value.
func (c *checker) assignWord(a *syntax.Assign, cx place) *word {
	wd := &word{pos: off(a.Pos())}
	if a.Index != nil {
		c.arith(wd.pos, "an array assignment NAME[subscript]=")
		c.walkArith(a.Index, cx)
	}
	switch {
	case a.Naked && a.Value != nil:
		return c.word(wd, a.Value, cx)
	case a.Naked:
		return c.word(wd, &syntax.Word{Parts: []syntax.WordPart{a.Name}}, cx)
	}
	wd.assign = a.Name.Value
	op := "="
	if a.Append {
		op = "+="
	}
	wd.pieces = append(wd.pieces, piece{lit: a.Name.Value + op, ph: -1})
	switch {
	case a.Array != nil:
		c.arith(off(a.Array.Lparen), "an array assignment NAME=(...)")
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				c.walkArith(e.Index, cx)
			}
			if e.Value != nil {
				c.word(wd, e.Value, cx)
			}
		}
	case a.Value != nil:
		c.parts(wd, a.Value.Parts, cx, false)
	}
	return wd
}

// walkArith walks the substitutions of an arithmetic expression whose
// placeholders the bash arithmetic rule refuses (a subscript, let's
// expressions); it reports whether the expression holds an expansion.
func (c *checker) walkArith(x syntax.ArithmExpr, cx place) (expand bool) {
	syntax.Walk(x, func(m syntax.Node) bool {
		switch y := m.(type) {
		case *syntax.ParamExp, *syntax.ArithmExp:
			expand = true
		case *syntax.CmdSubst:
			expand = true
			c.subst(&word{}, y, y.Stmts, cx)
			return false
		}
		return true
	})
	return expand
}

// letWord is one expression of let, as the word the rules read.
func (c *checker) letWord(e syntax.ArithmExpr, cx place) *word {
	from, to := off(e.Pos()), off(e.End())
	wd := &word{pos: from, expand: c.walkArith(e, cx)}
	_, wd.hasPH = c.phIn(from, to)
	if !wd.hasPH && !wd.expand {
		wd.pieces = []piece{{lit: c.src[from:to], ph: -1}}
	}
	return wd
}

// word adds a syntax word's parts to wd.
func (c *checker) word(wd *word, w *syntax.Word, cx place) *word {
	if len(wd.pieces) == 0 && !wd.hasPH {
		wd.pos = off(w.Pos())
	}
	c.parts(wd, w.Parts, cx, false)
	return wd
}

func (c *checker) parts(wd *word, ps []syntax.WordPart, cx place, inDQ bool) {
	for i, p := range ps {
		switch x := p.(type) {
		case *syntax.Lit:
			// A lone "$" before a placeholder is a literal of its own.
			dollar := false
			if i > 0 {
				if l, ok := ps[i-1].(*syntax.Lit); ok {
					raw := c.src[off(l.Pos()):off(l.End())]
					dollar = strings.HasSuffix(raw, "$") && backslashes(raw[:len(raw)-1])%2 == 0
				}
			}
			c.lit(wd, x, cx, inDQ, dollar)
		case *syntax.SglQuoted:
			wd.quoted = true
			if x.Dollar {
				// $'…' lets \' escape a quote, so shells disagree
				// about where it ends.
				c.shell, wd.expand = true, true
				if len(c.t.phs) > 0 {
					c.fail(off(x.Left), "$'...' quoting is not supported in a template with placeholders")
				}
				continue
			}
			c.refuse(x, cx, msgSQ)
			wd.pieces = append(wd.pieces, piece{lit: c.t.src[off(x.Left)+1 : off(x.Right)], ph: -1})
		case *syntax.DblQuoted:
			wd.quoted = true
			if x.Dollar {
				c.shell, wd.expand = true, true
			}
			c.parts(wd, x.Parts, cx.in(msgDQ), true)
		case *syntax.ParamExp:
			c.param(wd, x, cx)
		case *syntax.CmdSubst:
			c.subst(wd, x, x.Stmts, cx)
		case *syntax.ArithmExp:
			wd.expand = true
			what := "$((...))"
			if x.Bracket {
				what = "$[...]"
			}
			c.arithm(x, cx, what)
		case *syntax.ProcSubst:
			wd.procSubst = true
			c.subst(wd, x, x.Stmts, cx)
		case *syntax.ExtGlob:
			c.shell, wd.glob = true, true
			c.refuse(x, cx, msgParam)
			wd.pieces = append(wd.pieces, piece{lit: c.src[off(x.Pos()):off(x.End())], ph: -1})
		default:
			c.shell, wd.expand = true, true
			c.refuse(p, cx, msgParam)
		}
	}
}

// lit adds a literal to wd, removing its quoting backslashes and placing
// its placeholders.
func (c *checker) lit(wd *word, l *syntax.Lit, cx place, inDQ, dollar bool) {
	from, to := off(l.Pos()), off(l.End())
	raw := c.src[from:to]
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			wd.pieces = append(wd.pieces, piece{lit: b.String(), ph: -1})
			b.Reset()
		}
	}
	for i := 0; i < len(raw); {
		if ph := c.phAt(from + i); ph >= 0 {
			at := from + i
			switch {
			case i > 0 && raw[i-1] == '\\' && backslashes(raw[:i])%2 == 1:
				c.fail(at, "placeholder right after a backslash")
			case i > 0 && raw[i-1] == '$' && backslashes(raw[:i-1])%2 == 0, i == 0 && dollar:
				c.fail(at, `placeholder right after "$"`)
			case cx.msg != "":
				c.fail(at, "%s", cx.msg)
			}
			flush()
			wd.pieces = append(wd.pieces, piece{ph: ph})
			wd.hasPH = true
			i += c.t.phs[ph].End - c.t.phs[ph].Offset
			continue
		}
		ch := raw[i]
		switch {
		case ch == '\\' && (i+1 >= len(raw) || c.phAt(from+i+1) >= 0):
			// Kept as written (before a placeholder, refused there).
			if i+1 >= len(raw) && to == len(c.src) {
				c.fail(from+i, "backslash at the end of the command")
			}
		case ch == '\\' && raw[i+1] == '\n':
			c.shell = true // a line continuation
			i += 2
			continue
		case ch == '\\' && (!inDQ || strings.IndexByte("$`\"\\", raw[i+1]) >= 0):
			_, size := utf8.DecodeRuneInString(raw[i+1:])
			b.WriteString(raw[i+1 : i+1+size])
			wd.quoted = true
			i += 1 + size
			continue
		case ch == '\\':
			// The shell keeps the backslash here; an argv would need it
			// written differently.
			c.shell = true
			b.WriteString(raw[i : i+2])
			i += 2
			continue
		case ch == '$':
			c.shell = true // a lone "$"
		case inDQ:
		case ch == '*' || ch == '?' || ch == '{' || ch == '}':
			c.shell, wd.glob = true, true
		case ch == '[':
			c.shell, wd.bracket = true, true
		case ch == ']' || ch == '~' || ch == '!' || ch == '\r':
			c.shell = true
		}
		b.WriteByte(c.t.src[from+i]) // the template's byte: \r where the parser read \x01
		i++
	}
	flush()
}

// backslashes counts the backslashes that end s.
func backslashes(s string) int {
	return len(s) - len(strings.TrimRight(s, `\`))
}

// param walks ${…} or $name. Only plain words are supported inside
// ${…}: shells disagree about quotes there (bash treats ' inside
// "${x:-'}" as a quote, dash does not), so quotes, backquotes, $(…) and
// braces are refused.
func (c *checker) param(wd *word, x *syntax.ParamExp, cx place) {
	c.shell, wd.expand = true, true
	if x.Short {
		return
	}
	if cx.nest >= maxNesting {
		c.fail(off(x.Dollar), "expansions nest more than %d deep", maxNesting)
		return
	}
	cx.nest++
	c.refuse(x, cx, msgParam)
	if x.Index != nil && x.Param != nil {
		c.arith(off(x.Param.End()), "an array subscript in ${...}")
		syntax.Walk(x.Index, func(m syntax.Node) bool {
			if cs, ok := m.(*syntax.CmdSubst); ok {
				c.fail(off(cs.Pos()), "$(...) inside ${...} is not supported in templates")
				return false
			}
			return true
		})
	}
	if x.Slice != nil && x.Param != nil {
		c.arith(off(x.Param.End()), "a ${x:offset} substring")
	}
	var words []*syntax.Word
	if x.Exp != nil {
		words = append(words, x.Exp.Word)
	}
	if x.Repl != nil {
		words = append(words, x.Repl.Orig, x.Repl.With)
	}
	for _, w := range words {
		if w == nil {
			continue
		}
		for _, p := range w.Parts {
			at := off(p.Pos())
			switch p.(type) {
			case *syntax.SglQuoted, *syntax.DblQuoted, *syntax.CmdSubst:
				// Named by its quote (after the "$" of $'…' and $"…"):
				// ', ", ` or the "(" of $(…).
				if q := strings.TrimPrefix(c.src[at:], "$")[0]; q == '(' {
					c.fail(at, "$(...) inside ${...} is not supported in templates")
				} else {
					c.fail(at, "%q inside ${...} is not supported in templates", rune(q))
				}
			case *syntax.Lit:
				if i := strings.IndexAny(c.src[at:off(p.End())], "{\n'\"`"); i >= 0 {
					c.fail(at+i, "%q inside ${...} is not supported in templates", rune(c.src[at+i]))
				}
			}
		}
		c.parts(&word{}, w.Parts, cx.in(msgParam), false)
	}
}

// subst walks the commands of n, $(…), `…`, <(…) or >(…).
func (c *checker) subst(wd *word, n syntax.Node, ss []*syntax.Stmt, cx place) {
	c.shell, wd.expand = true, true
	in := cx.in(msgSubst)
	in.nest++
	if cs, ok := n.(*syntax.CmdSubst); ok && cs.Backquotes {
		// The hand-written lexer read `…` as opaque text; a placeholder
		// anywhere inside is refused as being in it.
		c.refuse(n, cx, msgTick)
		in = cx.in(msgTick)
		in.locked = true
	} else if cx.nest >= maxNesting {
		c.fail(off(n.Pos()), "expansions nest more than %d deep", maxNesting)
		return
	}
	in.subst++
	for _, s := range ss {
		c.stmt(s, in)
	}
}

// argv returns the words of a template that can run without a shell: one
// simple command using nothing a shell would interpret.
func (c *checker) argv() ([][]piece, bool) {
	if c.shell || len(c.cmds) != 1 || len(c.nested) != 0 || len(c.loose) != 0 {
		return nil, false
	}
	words := c.cmds[0]
	if len(words) == 0 || words[0].assign != "" {
		return nil, false
	}
	if lit, ok := literal(words[0]); ok && !words[0].quoted && (leadWords[lit] || noCommand[lit]) {
		return nil, false
	}
	argv := make([][]piece, len(words))
	for i, w := range words {
		if w.redir || w.expand {
			return nil, false
		}
		argv[i] = normPieces(w.pieces)
	}
	return argv, true
}

// literal returns the text of a word that is only literal text.
func literal(w *word) (string, bool) {
	if w.hasPH || w.expand {
		return "", false
	}
	return litOf(w.pieces), true
}

// litOf concatenates the literal pieces of ps.
func litOf(ps []piece) string {
	if len(ps) == 1 {
		return ps[0].lit
	}
	var b strings.Builder
	for _, p := range ps {
		if p.ph < 0 {
			b.WriteString(p.lit)
		}
	}
	return b.String()
}
