package template

// The shell template lexer. It reads a shell template the way a POSIX shell
// (dash, bash, busybox ash) would, with each placeholder as one opaque unit,
// and reports three things:
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
//     render_shell_rules.go.
//
// Where shells disagree or the grammar is hard, the lexer refuses rather
// than guesses, because a wrong guess about quoting is exactly an injection:
// case inside $(…), quotes inside ${…}, $'…', here-documents inside $(…),
// line continuations in here-documents, and, in an unquoted here-document
// body, an expansion left open at the end of a line (dash and busybox parse
// $(…) in a body across lines, past the delimiter line bash stops at, so
// what bash runs as commands they read as the body, inside double quotes).

import (
	"strings"
	"unicode/utf8"
)

// sym is one unit of a shell template: a rune of literal text or, with
// r == symPH, a placeholder.
type sym struct {
	r   rune
	ph  int // placeholder index when r == symPH
	pos int // byte offset in the template source
}

const (
	symPH  rune = -1 // a placeholder
	symEOF rune = -2 // past the end
)

// piece is a run of literal text (ph < 0), after quote removal, or one
// placeholder.
type piece struct {
	lit string
	ph  int
}

// word is one shell word.
type word struct {
	pieces []piece
	pos    int // byte offset of its first character

	hasPH   bool // holds a placeholder
	expand  bool // holds a $… or `…` expansion
	quoted  bool // some part was quoted or escaped
	glob    bool // holds an unquoted *, ?, { or }
	bracket bool // holds an unquoted [
	redir   bool // the target of a redirection
	heredoc bool // a here-document delimiter
	// assign is NAME for a NAME=value (or NAME+=value) assignment word.
	assign string

	nameState int // assignment detection, see addLit
	nameBuf   strings.Builder
	litBuf    strings.Builder

	procSubst bool     // holds a <(…) or >(…) process substitution (bash)
	fromData  bool     // filled from data at run time: xargs -I / find -exec {} (set by the rules pass)
	afterDD   bool     // follows the "--" that ends its program's options (set by the rules pass)
	fileRule  bool     // a value starting with @ or < would name a file to read (curl)
	curlRule  curlRule // what else a value must not make curl do with a file (set by the rules pass)
	plusRule  bool     // a value starting with "+" would be a command (less +!cmd, vi +cmd)
}

// command is one simple command: the words between two operators.
type command struct {
	words []*word
}

// heredoc is a here-document whose body is still to be read.
type heredoc struct {
	delim     string
	stripTabs bool // <<-
	quoted    bool // the delimiter was quoted: the body is literal
	pos       int
}

// build is the word and command state of one lexing level; a command
// substitution gets its own so that its words never mix with the outer ones.
type build struct {
	cmds      []*command
	cur       *command
	word      *word
	nextRedir int // redirTarget or redirHeredoc: the next word's role
	heredocOp heredoc
	inCond    bool // inside [[ … ]]
}

const (
	redirTarget = 1 + iota
	redirHeredoc
)

// lexer lexes one shell template.
type lexer struct {
	t       *Template
	syms    []sym
	i       int
	hasArgs bool // an argument placeholder (not only secrets)
	hasPH   bool // any placeholder

	b        *build
	nested   []*command // commands inside $(…), for the rules pass
	heredocs []heredoc

	depth   int   // command substitution nesting of the word being read
	nesting int   // expansions being read, for maxNesting
	err     error // a deferred error from endWord

	needShell  bool // only a shell understands this template
	arithPos   int  // offset of the first bash arithmetic construct, or -1
	arithWhat  string
	definePos  int // offset of the first function definition or alias, or -1
	defineWhat string
}

// lex lexes t. The error is a *TemplateError.
func lex(t *Template) (*lexer, error) {
	l := &lexer{t: t, arithPos: -1, definePos: -1, hasArgs: t.HasArgs(), hasPH: len(t.phs) > 0}
	off := 0
	for _, p := range t.parts {
		if p.ph >= 0 {
			l.syms = append(l.syms, sym{r: symPH, ph: p.ph, pos: t.phs[p.ph].Offset})
			off = t.phs[p.ph].End
			continue
		}
		for i, r := range p.lit {
			if r == utf8.RuneError && !strings.HasPrefix(p.lit[i:], "\uFFFD") {
				return nil, l.errAt(off+i, "the command is not valid UTF-8")
			}
			if r == 0 {
				return nil, l.errAt(off+i, "the command contains a NUL byte")
			}
			l.syms = append(l.syms, sym{r: r, ph: -1, pos: off + i})
		}
		off += len(p.lit)
	}
	l.b = &build{cur: &command{}}
	if err := l.list(0, 0); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *lexer) errAt(off int, format string, args ...any) *Error {
	return errorAt(l.t.src, off, format, args...)
}

// shell notes that the template needs a shell; why says so at the call.
func (l *lexer) shell(why string) { l.needShell = true }

// arith notes a bash construct that evaluates text as an arithmetic
// expression. Bash evaluates array subscripts inside such expressions, and
// variable contents recursively, so a value like a[$(cmd)] reaching one by
// any route (a variable, a command's output) runs cmd.
func (l *lexer) arith(pos int, what string) {
	l.shell(what)
	if l.arithPos < 0 {
		l.arithPos, l.arithWhat = pos, what
	}
}

func (l *lexer) peek(k int) sym {
	if l.i+k < len(l.syms) {
		return l.syms[l.i+k]
	}
	end := len(l.t.src)
	return sym{r: symEOF, ph: -1, pos: end}
}

func (l *lexer) cur() sym { return l.peek(0) }

// list lexes commands until the end (depth 0) or the ")" that closes the
// command substitution at depth > 0. open is the offset of that "$(".
func (l *lexer) list(depth, open int) error {
	parens := 0
	for {
		if l.err != nil {
			return l.err
		}
		c := l.cur()
		switch c.r {
		case symEOF:
			if depth > 0 {
				return l.errAt(open, "unterminated $(...) command substitution")
			}
			if err := l.endCommand(); err != nil {
				return err
			}
			if len(l.heredocs) > 0 {
				return l.errAt(l.heredocs[0].pos, "here-document has no body: it needs a newline and a closing %q line", l.heredocs[0].delim)
			}
			return nil
		case symPH:
			if err := l.addPH(c, depth); err != nil {
				return err
			}
			l.i++
		case ' ', '\t':
			l.endWord()
			l.i++
		case '\n':
			if err := l.endCommand(); err != nil {
				return err
			}
			l.i++
			if len(l.heredocs) > 0 {
				if depth > 0 {
					return l.errAt(c.pos, "here-documents inside $(...) are not supported")
				}
				if err := l.readHeredocs(); err != nil {
					return err
				}
			}
		case '#':
			if l.b.word == nil {
				if err := l.comment(); err != nil {
					return err
				}
				continue
			}
			l.addLit('#', false)
			l.i++
		case '\'':
			if err := l.singleQuoted(); err != nil {
				return err
			}
		case '"':
			if err := l.doubleQuoted(depth); err != nil {
				return err
			}
		case '\\':
			if err := l.backslash(); err != nil {
				return err
			}
		case '$':
			if err := l.dollar(depth, false); err != nil {
				return err
			}
		case '`':
			if err := l.backtick(); err != nil {
				return err
			}
		case '(':
			if w := l.b.word; w != nil && w.assign != "" && l.i > 0 && l.syms[l.i-1].r == '=' {
				// NAME=(...): a bash array, whose [subscript]=value
				// elements are arithmetic.
				l.arith(c.pos, "an array assignment NAME=(...)")
			} else if l.b.nextRedir == redirTarget && l.i > 0 && (l.syms[l.i-1].r == '<' || l.syms[l.i-1].r == '>') {
				// <(...) or >(...): bash process substitution, a word
				// naming a pipe, not a redirection.
				l.b.nextRedir = 0
				w := l.ensureWord()
				w.pos, w.expand, w.procSubst = l.syms[l.i-1].pos, true, true
				l.noAssign(w)
				if err := l.substitution(c.pos, depth); err != nil {
					return err
				}
				continue
			} else if (l.b.word != nil || len(l.b.cur.words) > 0) && l.peek(1).r != '(' {
				// NAME() or NAME (): a function definition.
				l.define(c.pos, "a function definition")
			}
			l.endWord()
			if l.peek(1).r == '(' {
				l.arith(c.pos, "((...))")
				if err := l.skipArith(c.pos, '(', ')', depth); err != nil {
					return err
				}
				continue
			}
			l.shell("a subshell")
			if err := l.endCommand(); err != nil {
				return err
			}
			parens++
			l.i++
		case ')':
			l.endWord()
			if err := l.endCommand(); err != nil {
				return err
			}
			l.i++
			if parens == 0 && depth > 0 {
				return nil
			}
			if parens > 0 {
				parens--
			}
			l.shell("a parenthesis")
		case ';', '|':
			l.shell("an operator")
			if err := l.endCommand(); err != nil {
				return err
			}
			l.i++
			for r := l.cur().r; r == ';' || r == '&' || r == '|'; r = l.cur().r {
				l.i++
			}
		case '&':
			l.shell("an operator")
			if l.peek(1).r == '>' { // &> and &>> redirect stdout and stderr
				if err := l.redirection(); err != nil {
					return err
				}
				continue
			}
			if err := l.endCommand(); err != nil {
				return err
			}
			l.i++
			for r := l.cur().r; r == '&' || r == '|'; r = l.cur().r {
				l.i++
			}
		case '<', '>':
			if err := l.redirection(); err != nil {
				return err
			}
		default:
			switch c.r {
			case '*', '?', '{', '}':
				l.ensureWord().glob = true
				l.shell("a glob or brace character")
			case '[':
				l.ensureWord().bracket = true
				l.shell("a glob character")
			case ']', '~', '!':
				l.shell("a glob, tilde or ! character")
			case '\r':
				l.shell("a carriage return")
			}
			l.addLit(c.r, false)
			l.i++
		}
	}
}

// ensureWord starts a word if none is in progress.
func (l *lexer) ensureWord() *word {
	if l.b.word == nil {
		l.b.word = &word{pos: l.cur().pos}
	}
	return l.b.word
}

// Assignment detection states (word.nameState).
const (
	nameStart     = iota // nothing read yet
	nameIn               // NAME so far
	namePlus             // NAME+
	nameDone             // decided
	nameSubscript        // NAME[...
	nameClose            // NAME[...]
	nameClosePlus        // NAME[...]+
)

// addLit adds one literal rune to the current word. Unquoted runes also
// drive assignment detection: NAME=, NAME+=, and bash's NAME[sub]= whose
// subscript is an arithmetic expression.
func (l *lexer) addLit(r rune, quoted bool) {
	w := l.ensureWord()
	w.litBuf.WriteRune(r)
	if quoted {
		w.quoted = true
		l.noAssign(w)
		return
	}
	nameChar := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
	switch w.nameState {
	case nameStart, nameIn:
		switch {
		case nameChar || (w.nameState == nameIn && r >= '0' && r <= '9'):
			w.nameBuf.WriteRune(r)
			w.nameState = nameIn
		case w.nameState == nameIn && r == '=':
			w.assign, w.nameState = w.nameBuf.String(), nameDone
		case w.nameState == nameIn && r == '+':
			w.nameState = namePlus
		case w.nameState == nameIn && r == '[':
			w.nameState = nameSubscript
		default:
			w.nameState = nameDone
		}
	case namePlus:
		if r == '=' {
			w.assign = w.nameBuf.String()
		}
		w.nameState = nameDone
	case nameSubscript:
		if r == ']' {
			w.nameState = nameClose
		}
	case nameClose, nameClosePlus:
		switch {
		case r == '=':
			w.assign = w.nameBuf.String()
			w.nameState = nameDone
			l.arith(w.pos, "an array assignment NAME[subscript]=")
		case r == '+' && w.nameState == nameClose:
			w.nameState = nameClosePlus
		case r == ']':
			w.nameState = nameClose
		default:
			w.nameState = nameSubscript
		}
	}
}

// noAssign notes something other than an unquoted name character; inside a
// NAME[subscript] the subscript may hold anything.
func (l *lexer) noAssign(w *word) {
	switch w.nameState {
	case nameDone, nameSubscript:
	default:
		w.nameState = nameDone
	}
}

// flushLit ends the current literal run of w.
func (w *word) flushLit() {
	if w.litBuf.Len() > 0 {
		w.pieces = append(w.pieces, piece{lit: w.litBuf.String(), ph: -1})
		w.litBuf.Reset()
	}
}

// addPH adds a placeholder to the current word, refusing the places where
// a single-quoted value would not be one literal word.
func (l *lexer) addPH(c sym, depth int) error {
	switch {
	case depth > 0:
		return l.errAt(c.pos, "placeholder inside a $(...) command substitution")
	case l.b.inCond:
		return l.errAt(c.pos, "placeholder inside [[ ... ]]")
	case l.b.nextRedir == redirHeredoc:
		return l.errAt(c.pos, "placeholder in a here-document delimiter")
	}
	w := l.ensureWord()
	w.flushLit()
	w.pieces = append(w.pieces, piece{ph: c.ph})
	w.hasPH = true
	l.noAssign(w)
	return nil
}

// endWord finishes the current word, if any.
func (l *lexer) endWord() {
	w := l.b.word
	if w == nil {
		return
	}
	l.b.word = nil
	w.flushLit()
	switch l.b.nextRedir {
	case redirTarget:
		w.redir = true
	case redirHeredoc:
		w.heredoc = true
		h := l.b.heredocOp
		h.delim, h.quoted, h.pos = litOf(w), w.quoted, w.pos
		l.heredocs = append(l.heredocs, h)
	}
	l.b.nextRedir = 0
	if lit, ok := literal(w); ok && !w.quoted {
		switch lit {
		case "case":
			// A case pattern's unbalanced ")" would end a $(...) early
			// for this lexer; refuse rather than misjudge the quoting.
			if l.depth > 0 && l.err == nil {
				l.err = l.errAt(w.pos, "case inside $(...) is not supported in templates")
			}
		case "function":
			l.define(w.pos, "a function definition")
		case "[[":
			l.b.inCond = true
			l.shell("[[")
		case "]]":
			l.b.inCond = false
		case "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
			if l.b.inCond {
				l.arith(w.pos, "an arithmetic comparison inside [[ ... ]]")
			}
		}
	}
	l.b.cur.words = append(l.b.cur.words, w)
}

// endCommand finishes the current simple command.
func (l *lexer) endCommand() error {
	l.endWord()
	if l.b.nextRedir != 0 {
		return l.errAt(l.cur().pos, "redirection without a target")
	}
	if len(l.b.cur.words) > 0 {
		l.b.cmds = append(l.b.cmds, l.b.cur)
		l.b.cur = &command{}
	}
	return nil
}

// comment skips a comment to the end of its line.
func (l *lexer) comment() error {
	l.shell("a comment")
	for {
		c := l.cur()
		switch c.r {
		case symEOF, '\n':
			return nil
		case symPH:
			return l.errAt(c.pos, "placeholder inside a comment (a newline in the value would end the comment)")
		}
		l.i++
	}
}

// singleQuoted reads '…'.
func (l *lexer) singleQuoted() error {
	start := l.cur().pos
	w := l.ensureWord()
	w.quoted = true
	l.noAssign(w)
	l.i++
	for {
		c := l.cur()
		switch c.r {
		case symEOF:
			return l.errAt(start, "unterminated single quote")
		case symPH:
			return l.errAt(c.pos, "placeholder inside single quotes; write it unquoted: values are quoted for you")
		case '\'':
			l.i++
			return nil
		}
		l.addLit(c.r, true)
		l.i++
	}
}

// doubleQuoted reads "…".
func (l *lexer) doubleQuoted(depth int) error {
	start := l.cur().pos
	w := l.ensureWord()
	w.quoted = true
	l.noAssign(w)
	l.i++
	for {
		c := l.cur()
		switch c.r {
		case symEOF:
			return l.errAt(start, "unterminated double quote")
		case symPH:
			return l.errAt(c.pos, "placeholder inside double quotes; write it unquoted: values are quoted for you")
		case '"':
			l.i++
			return nil
		case '\\':
			n := l.peek(1)
			switch n.r {
			case symPH:
				return l.errAt(n.pos, "placeholder right after a backslash")
			case symEOF:
				return l.errAt(start, "unterminated double quote")
			case '$', '`', '"', '\\':
				l.addLit(n.r, true)
				l.i += 2
			case '\n':
				l.shell("a line continuation")
				l.i += 2
			default:
				// The shell keeps the backslash here; an argv would need it
				// written differently.
				l.shell(`a backslash inside double quotes`)
				l.addLit('\\', true)
				l.i++
			}
		case '$':
			if err := l.dollar(depth, true); err != nil {
				return err
			}
		case '`':
			if err := l.backtick(); err != nil {
				return err
			}
		default:
			l.addLit(c.r, true)
			l.i++
		}
	}
}

// backslash reads an unquoted \x.
func (l *lexer) backslash() error {
	c, n := l.cur(), l.peek(1)
	switch n.r {
	case symPH:
		return l.errAt(n.pos, "placeholder right after a backslash")
	case symEOF:
		return l.errAt(c.pos, "backslash at the end of the command")
	case '\n':
		l.shell("a line continuation")
		l.i += 2
		return nil
	}
	l.ensureWord()
	l.addLit(n.r, true)
	l.i += 2
	return nil
}

// backtick skips `…`, in which no placeholder may appear.
func (l *lexer) backtick() error {
	start := l.cur().pos
	l.shell("a `...` command substitution")
	w := l.ensureWord()
	w.expand = true
	l.noAssign(w)
	l.i++
	for {
		c := l.cur()
		switch c.r {
		case symEOF:
			return l.errAt(start, "unterminated `...` command substitution")
		case symPH:
			return l.errAt(c.pos, "placeholder inside a `...` command substitution")
		case '`':
			l.i++
			return nil
		case '\n':
			if len(l.heredocs) > 0 {
				return l.errAt(c.pos, "a `...` spanning lines before a here-document body is not supported in templates")
			}
		case '\\':
			if n := l.peek(1); n.r == symPH {
				return l.errAt(n.pos, "placeholder inside a `...` command substitution")
			} else if n.r == symEOF {
				return l.errAt(start, "unterminated `...` command substitution")
			}
			l.i += 2
			continue
		}
		l.i++
	}
}

// dollar reads a "$" and what it introduces, as part of the current word.
func (l *lexer) dollar(depth int, inDQ bool) error {
	c, n := l.cur(), l.peek(1)
	switch {
	case n.r == symPH:
		return l.errAt(n.pos, `placeholder right after "$"`)
	case n.r == '\'' && !inDQ:
		// $'…' (bash, ksh, zsh, newer dash) lets \' escape a quote, so
		// shells disagree about where it ends.
		if l.hasPH {
			return l.errAt(c.pos, "$'...' quoting is not supported in a template with placeholders")
		}
		l.shell("$'...'")
		w := l.ensureWord()
		w.quoted, w.expand = true, true
		l.noAssign(w)
		l.i += 2
		for {
			switch l.cur().r {
			case symEOF:
				return l.errAt(c.pos, "unterminated $'...'")
			case '\\':
				l.i += 2
				continue
			case '\'':
				l.i++
				return nil
			}
			l.i++
		}
	case n.r == '"' && !inDQ:
		// $"…" is a translated string: double quotes for our purposes.
		l.shell(`$"..."`)
		l.ensureWord().expand = true
		l.i++
		return nil
	case n.r == '(' || n.r == '{' || n.r == '[' || isParamStart(n.r):
		w := l.ensureWord()
		w.expand = true
		l.noAssign(w)
		return l.skipDollar(depth)
	}
	// A lone "$" is literal.
	l.shell(`a "$"`)
	l.addLit('$', inDQ)
	l.i++
	return nil
}

func isParamStart(r rune) bool {
	return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@*#?-$!", r)
}

// skipDollar skips an expansion starting at "$": $name, $1, $?, ${…},
// $(…), $((…)) or $[…]. It adds nothing to the current word.
func (l *lexer) skipDollar(depth int) error {
	c, n := l.cur(), l.peek(1)
	l.shell("a $ expansion")
	switch {
	case n.r == '(' && l.peek(2).r == '(':
		l.arith(c.pos, "$((...))")
		l.i++
		return l.skipArith(c.pos, '(', ')', depth)
	case n.r == '(':
		l.i++
		return l.substitution(c.pos, depth)
	case n.r == '[':
		l.arith(c.pos, "$[...]")
		l.i++
		return l.skipArith(c.pos, '[', ']', depth)
	case n.r == '{':
		return l.paramExpansion(depth)
	case n.r >= '0' && n.r <= '9' || strings.ContainsRune("@*#?-$!", n.r):
		l.i += 2
		return nil
	}
	l.i++
	for r := l.cur().r; r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'; r = l.cur().r {
		l.i++
	}
	return nil
}

// maxNesting bounds how deeply expansions may nest.
const maxNesting = 32

// enter and leave track the nesting of expansions, which the lexer reads
// recursively.
func (l *lexer) enter(pos int) error {
	if l.nesting >= maxNesting {
		return l.errAt(pos, "expansions nest more than %d deep", maxNesting)
	}
	l.nesting++
	return nil
}

func (l *lexer) leave() { l.nesting-- }

// substitution lexes the command list of $(…), <(…) or >(…), from its "(",
// with word and command state of its own.
func (l *lexer) substitution(open, depth int) error {
	if err := l.enter(open); err != nil {
		return err
	}
	defer l.leave()
	l.i++
	saved := l.b
	l.b = &build{cur: &command{}}
	l.depth++
	err := l.list(depth+1, open)
	l.depth--
	l.nested = append(l.nested, l.b.cmds...)
	l.b = saved
	return err
}

// define notes a construct that gives words a meaning the rules cannot
// see: a function definition or an alias. A function body can run its
// arguments ("$@") or evaluate them, so a template with arguments may not
// define one.
func (l *lexer) define(pos int, what string) {
	l.shell(what)
	if l.definePos < 0 {
		l.definePos, l.defineWhat = pos, what
	}
}

// paramExpansion skips ${…}. Only plain words are supported inside: shells
// disagree about quotes there (bash treats ' inside "${x:-'}" as a quote,
// dash does not), so quotes, backquotes, $(…) and braces are refused.
func (l *lexer) paramExpansion(depth int) error {
	start := l.cur().pos
	if err := l.enter(start); err != nil {
		return err
	}
	defer l.leave()
	l.i += 2
	first := true
	for {
		c := l.cur()
		switch c.r {
		case symEOF:
			return l.errAt(start, "unterminated ${...}")
		case symPH:
			return l.errAt(c.pos, "placeholder inside ${...}")
		case '}':
			l.i++
			return nil
		case '\'', '"', '`', '{', '\n':
			return l.errAt(c.pos, "%q inside ${...} is not supported in templates", c.r)
		case '\\':
			if n := l.peek(1); n.r == symPH {
				return l.errAt(n.pos, "placeholder inside ${...}")
			} else if n.r == symEOF {
				return l.errAt(start, "unterminated ${...}")
			}
			l.i += 2
			continue
		case '$':
			n := l.peek(1)
			if n.r == '(' {
				return l.errAt(c.pos, "$(...) inside ${...} is not supported in templates")
			}
			if n.r == '{' || n.r == '[' || isParamStart(n.r) {
				if err := l.skipDollar(depth); err != nil {
					return err
				}
				continue
			}
		case '[':
			l.arith(c.pos, "an array subscript in ${...}")
		case ':':
			// ${x:offset:length} is arithmetic; ${x:-w} ${x:=w} ${x:?w} ${x:+w} are not.
			if n := l.peek(1).r; !first && n != '-' && n != '=' && n != '?' && n != '+' {
				l.arith(c.pos, "a ${x:offset} substring")
			}
		}
		first = false
		l.i++
	}
}

// skipArith skips an arithmetic expression from its first opening bracket
// to the matching close. Placeholders and quotes are refused inside.
func (l *lexer) skipArith(start int, open, close rune, depth int) error {
	if err := l.enter(start); err != nil {
		return err
	}
	defer l.leave()
	level := 0
	for {
		c := l.cur()
		switch c.r {
		case symEOF:
			return l.errAt(start, "unterminated arithmetic expression")
		case symPH:
			return l.errAt(c.pos, "placeholder inside an arithmetic expression")
		case '\'', '"':
			return l.errAt(c.pos, "quotes inside an arithmetic expression are not supported in templates")
		case '\n':
			if len(l.heredocs) > 0 {
				return l.errAt(c.pos, "an arithmetic expression spanning lines before a here-document body is not supported in templates")
			}
		case '`':
			if err := l.backtick(); err != nil {
				return err
			}
			continue
		case '\\':
			if n := l.peek(1); n.r == symPH {
				return l.errAt(n.pos, "placeholder inside an arithmetic expression")
			}
			l.i += 2
			continue
		case '$':
			if err := l.skipDollar(depth); err != nil {
				return err
			}
			continue
		case open:
			level++
		case close:
			level--
			if level == 0 {
				l.i++
				return nil
			}
		}
		l.i++
	}
}

// redirection reads a redirection operator; the next word is its target
// (or a here-document delimiter). A word of digits right before the
// operator is its file descriptor, not an argument.
func (l *lexer) redirection() error {
	l.shell("a redirection")
	if w := l.b.word; w != nil && !w.quoted && !w.hasPH && !w.expand && len(w.pieces) == 0 && allDigits(w.litBuf.String()) {
		l.b.word = nil // an IO number such as the 2 of 2>
	} else {
		l.endWord()
	}
	if l.b.nextRedir != 0 {
		return l.errAt(l.cur().pos, "redirection without a target")
	}
	c := l.cur()
	op := string(c.r)
	l.i++
	for {
		r := l.cur().r
		next := op + string(r)
		switch next {
		case "<<", "<<-", "<<<", ">>", "<&", ">&", "<>", ">|", "&>", "&>>":
			op = next
			l.i++
			continue
		}
		break
	}
	switch op {
	case "<<", "<<-":
		if l.depth > 0 {
			return l.errAt(c.pos, "here-documents inside $(...) are not supported in templates")
		}
		l.b.nextRedir = redirHeredoc
		l.b.heredocOp = heredoc{stripTabs: op == "<<-"}
	default:
		l.b.nextRedir = redirTarget
	}
	return nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// readHeredocs reads the bodies of the pending here-documents, which start
// on the line after their operator. No placeholder may appear in a body: in
// an unquoted one the quote marks would be literal and $(…) in the value
// would run; in a quoted one a value holding the delimiter line would end it.
func (l *lexer) readHeredocs() error {
	for _, h := range l.heredocs {
		if h.delim == "" || strings.ContainsAny(h.delim, "$`\n") {
			return l.errAt(h.pos, "unsupported here-document delimiter %q", h.delim)
		}
		for {
			if l.cur().r == symEOF {
				return l.errAt(h.pos, "here-document is not closed by a %q line", h.delim)
			}
			var line strings.Builder
			lineStart, startIdx := l.cur().pos, l.i
			for {
				c := l.cur()
				if c.r == symEOF || c.r == '\n' {
					break
				}
				if c.r == symPH {
					return l.errAt(c.pos, "placeholder inside a here-document")
				}
				line.WriteRune(c.r)
				l.i++
			}
			if l.cur().r == '\n' {
				l.i++
			}
			text := line.String()
			if h.stripTabs {
				text = strings.TrimLeft(text, "\t")
			}
			if text == h.delim {
				break
			}
			if !h.quoted {
				if strings.HasSuffix(text, `\`) {
					return l.errAt(lineStart, "a line continuation inside a here-document is not supported in templates")
				}
				if err := l.heredocLine(startIdx, l.i); err != nil {
					return err
				}
			}
		}
	}
	l.heredocs = nil
	return nil
}

// heredocLine checks the expansions of one line of an unquoted
// here-document body, syms[from:to]. Dash and busybox parse $(…), `…` and
// ${…} in a body with the full lexer, so one left open at the end of the
// line swallows the delimiter line and the body runs on, over lines bash
// (and this lexer) would read as commands. Every expansion must therefore
// close on its own line.
func (l *lexer) heredocLine(from, to int) error {
	sub := &lexer{t: l.t, syms: l.syms[from:to], hasArgs: l.hasArgs, hasPH: l.hasPH,
		arithPos: -1, definePos: -1, depth: 1, b: &build{cur: &command{}}}
	for sub.i < len(sub.syms) {
		c := sub.cur()
		var err error
		switch {
		case c.r == '\\':
			sub.i += 2
			continue
		case c.r == '`':
			sub.b.word = nil
			err = sub.backtick()
		case c.r == '$' && strings.ContainsRune("({[", sub.peek(1).r):
			sub.b.word = nil
			err = sub.skipDollar(1)
		default:
			sub.i++
			continue
		}
		if err != nil {
			return l.errAt(c.pos, "an expansion in a here-document must close on its own line in a template (%s)", err.(*Error).Msg)
		}
	}
	l.nested = append(l.nested, sub.nested...)
	if sub.arithPos >= 0 {
		l.arith(sub.arithPos, sub.arithWhat)
	}
	if sub.definePos >= 0 {
		l.define(sub.definePos, sub.defineWhat)
	}
	return nil
}

// literal returns the text of a word that is only literal text.
func literal(w *word) (string, bool) {
	if w.hasPH || w.expand {
		return "", false
	}
	return litOf(w), true
}

// litOf concatenates the literal pieces of w.
func litOf(w *word) string {
	if len(w.pieces) == 1 {
		return w.pieces[0].lit
	}
	var b strings.Builder
	for _, p := range w.pieces {
		if p.ph < 0 {
			b.WriteString(p.lit)
		}
	}
	return b.String()
}
