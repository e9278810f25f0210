package policy

import (
	"errors"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// This file reads shell text with mvdan.cc/sh/v3/syntax (bash, which
// parses every POSIX program too) and hands the walker the small tree it
// consumes (shList, shCmd, shWord). The parser decides where commands
// start and end and what is quoted; this file only renames its nodes,
// removes quotes from literals and bounds the depth and the work. What the
// parser refuses is refused (group "parse"), never guessed at.

// shSyntax converts one parse; src is the text the positions refer to.
type shSyntax struct {
	src   string
	depth int
	work  *int
	err   *ShellDeniedError
	words []shWord // allocation slabs, sized from the text's length
	cmds  []shCmd
}

func (c *shSyntax) newWord() *shWord {
	if len(c.words) == cap(c.words) {
		c.words = make([]shWord, 0, min(16, 2+len(c.src)/6))
	}
	c.words = append(c.words, shWord{})
	return &c.words[len(c.words)-1]
}

func (c *shSyntax) newCmd(kind shCmdKind) *shCmd {
	if len(c.cmds) == cap(c.cmds) {
		c.cmds = make([]shCmd, 0, min(8, 1+len(c.src)/32))
	}
	c.cmds = append(c.cmds, shCmd{kind: kind})
	return &c.cmds[len(c.cmds)-1]
}

// shBashParsers holds idle bash parsers: a new one allocates several
// kilobytes, as much as the rest of a typical check. A parser keeps no
// state from one parse to the next.
var shBashParsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// shParse parses src as a shell script at the given nesting depth.
func shParse(src string, depth int, work *int) (*shList, *ShellDeniedError) {
	c := &shSyntax{src: src, depth: depth, work: work}
	if depth > shMaxDepth {
		c.fail("too_deep", "commands are nested more than 8 levels deep")
		return nil, c.err
	}
	if !c.spend(1 + len(src)/64) {
		return nil, c.err
	}
	if shBracketDepth(src) > shMaxBrackets {
		// The parser backtracks on deep $(( nesting (10,000 levels take
		// seconds); text this deep is refused before it is parsed.
		c.fail("too_deep", "commands are nested more than 8 levels deep")
		return nil, c.err
	}
	p := shBashParsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	shBashParsers.Put(p)
	if err != nil {
		// What bash refuses, dash may run: ((a; b)) is two subshells to
		// dash, a[$(cmd)] a word. Text either shell reads is walked.
		pf, perr := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(src), "")
		if perr != nil {
			return nil, shSyntaxErr(err, src)
		}
		f = pf
	}
	l := c.stmts(f.Stmts)
	if c.err != nil {
		return nil, c.err
	}
	return l, nil
}

// shMaxBrackets bounds the nesting of ( and { outside single quotes,
// four per level of the depth bound: more cannot be within it.
const shMaxBrackets = 4 * shMaxDepth

// shBracketDepth is the deepest nesting of ( and { in src, outside single
// quotes and escapes; a cheap upper bound of the parse tree's depth.
func shBracketDepth(src string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '\'':
			if j := strings.IndexByte(src[i+1:], '\''); j >= 0 {
				i += j + 1
			}
		case '(', '{':
			depth++
			deepest = max(deepest, depth)
		case ')', '}':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}

// shParseLenient parses text that may or may not be commands; it returns
// no list when it does not parse, and an error only for the limits (depth,
// work), which stop the analysis.
func shParseLenient(src string, depth int, work *int) (*shList, *ShellDeniedError) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	w := *work
	l, err := shParse(src, depth, &w)
	if err != nil {
		if err.Rule == "too_deep" || err.Rule == "too_complex" {
			return nil, err
		}
		return nil, nil
	}
	*work = w
	return l, nil
}

// shSyntaxErr names a parse error: text that ends too early is
// "unbalanced", anything else "syntax".
func shSyntaxErr(err error, src string) *ShellDeniedError {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		// An operator with nothing after it is a syntax error to the
		// shell running the text, not text cut short.
		t := strings.TrimRight(src, " \t\n")
		if pe.Incomplete && (t == "" || !strings.ContainsRune("|&<>", rune(t[len(t)-1]))) || strings.Contains(pe.Text, "without matching") {
			return shParseErr("unbalanced", pe.Text, src)
		}
		return shParseErr("syntax", pe.Text, src)
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		return shParseErr("syntax", le.Feature+" is not supported", src)
	}
	return shParseErr("syntax", err.Error(), src)
}

func (c *shSyntax) fail(rule, desc string) {
	if c.err == nil {
		c.err = shParseErr(rule, desc, c.src)
	}
}

// spend charges n units of work and fails once the budget is gone.
func (c *shSyntax) spend(n int) bool {
	*c.work -= n
	if *c.work < 0 {
		c.fail("too_complex", "command text takes too much work to analyse")
		return false
	}
	return c.err == nil
}

// enter counts one more level of nesting: compound commands, quotes,
// substitutions and parameter operators all count.
func (c *shSyntax) enter() bool {
	c.depth++
	if c.depth > shMaxDepth {
		c.fail("too_deep", "commands are nested more than 8 levels deep")
		return false
	}
	return c.err == nil
}

func (c *shSyntax) leave() { c.depth-- }

// text is the source text between two positions.
func (c *shSyntax) text(from, to syntax.Pos) string {
	a, b := int(from.Offset()), int(to.Offset())
	if !from.IsValid() || !to.IsValid() || a > b || b > len(c.src) {
		return ""
	}
	return c.src[a:b]
}

func (c *shSyntax) nodeText(n syntax.Node) string { return c.text(n.Pos(), n.End()) }

func (c *shSyntax) stmts(ss []*syntax.Stmt) *shList {
	l := &shList{items: make([]*shAndOr, 0, len(ss))}
	for _, s := range ss {
		if c.err != nil {
			return l
		}
		ao := &shAndOr{bg: s.Background, pipes: make([]*shPipeline, 0, shLeaves(s, false))}
		c.andOr(s, ao)
		if len(ao.pipes) > 0 {
			l.items = append(l.items, ao)
		}
	}
	return l
}

// andOr flattens && and || into one and-or list.
func (c *shSyntax) andOr(s *syntax.Stmt, ao *shAndOr) {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && len(s.Redirs) == 0 && (b.Op == syntax.AndStmt || b.Op == syntax.OrStmt) {
		c.andOr(b.X, ao)
		c.andOr(b.Y, ao)
		return
	}
	pl := &shPipeline{cmds: make([]*shCmd, 0, shLeaves(s, true))}
	c.pipeline(s, pl)
	ao.pipes = append(ao.pipes, pl)
}

// shLeaves counts the members of the pipeline (pipe) or and-or list s
// heads, to size their slices once.
func shLeaves(s *syntax.Stmt, pipe bool) int {
	b, ok := s.Cmd.(*syntax.BinaryCmd)
	if !ok || len(s.Redirs) > 0 {
		return 1
	}
	if pipe && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) || !pipe && (b.Op == syntax.AndStmt || b.Op == syntax.OrStmt) {
		return shLeaves(b.X, pipe) + shLeaves(b.Y, pipe)
	}
	return 1
}

// pipeline flattens | and |& into one pipeline.
func (c *shSyntax) pipeline(s *syntax.Stmt, pl *shPipeline) {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && len(s.Redirs) == 0 && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		c.pipeline(b.X, pl)
		c.pipeline(b.Y, pl)
		return
	}
	if cmd := c.stmt(s); cmd != nil {
		pl.cmds = append(pl.cmds, cmd)
	}
}

// body is a statement list as the body of a compound command.
func (c *shSyntax) body(ss []*syntax.Stmt) *shList {
	if !c.enter() {
		return &shList{}
	}
	defer c.leave()
	return c.stmts(ss)
}

// stmt converts one statement: its command and its redirections.
func (c *shSyntax) stmt(s *syntax.Stmt) *shCmd {
	if !c.spend(1) {
		return nil
	}
	cmd := c.command(s.Cmd)
	if cmd == nil {
		return nil
	}
	for _, r := range s.Redirs {
		if rd := c.redirect(r); rd != nil {
			cmd.redirs = append(cmd.redirs, rd)
		}
	}
	return cmd
}

// single wraps one statement as a list.
func (c *shSyntax) single(s *syntax.Stmt) *shList {
	return c.body([]*syntax.Stmt{s})
}

func (c *shSyntax) command(n syntax.Command) *shCmd {
	switch x := n.(type) {
	case nil:
		return &shCmd{kind: cmdSimple}
	case *syntax.CallExpr:
		return c.call(x)
	case *syntax.Subshell:
		return &shCmd{kind: cmdSubshell, lists: []*shList{c.body(x.Stmts)}}
	case *syntax.Block:
		return &shCmd{kind: cmdGroup, lists: []*shList{c.body(x.Stmts)}}
	case *syntax.BinaryCmd:
		// && or | under redirections: {a && b; } > f reads the same.
		return &shCmd{kind: cmdGroup, lists: []*shList{c.body([]*syntax.Stmt{{Cmd: x, Position: x.Pos()}})}}
	case *syntax.IfClause:
		if !c.enter() {
			return nil
		}
		defer c.leave()
		out := &shCmd{kind: cmdIf}
		for cl := x; cl != nil; cl = cl.Else {
			if cl.ThenPos.IsValid() {
				out.lists = append(out.lists, c.stmts(cl.Cond), c.stmts(cl.Then))
			} else {
				out.lists = append(out.lists, c.stmts(cl.Then))
			}
		}
		return out
	case *syntax.WhileClause:
		if !c.enter() {
			return nil
		}
		defer c.leave()
		return &shCmd{kind: cmdLoop, lists: []*shList{c.stmts(x.Cond), c.stmts(x.Do)}}
	case *syntax.ForClause:
		if !c.enter() {
			return nil
		}
		defer c.leave()
		out := &shCmd{kind: cmdFor}
		switch lp := x.Loop.(type) {
		case *syntax.WordIter:
			out.name = lp.Name.Value
			for _, w := range lp.Items {
				out.words = append(out.words, c.word(w, false))
			}
		case *syntax.CStyleLoop:
			out.words = []*shWord{c.arithWord(c.text(posAdd(lp.Lparen, 2), lp.Rparen))}
		}
		out.lists = []*shList{c.stmts(x.Do)}
		return out
	case *syntax.CaseClause:
		if !c.enter() {
			return nil
		}
		defer c.leave()
		out := &shCmd{kind: cmdCase, words: []*shWord{c.word(x.Word, false)}}
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				out.words = append(out.words, c.word(p, false))
			}
			out.lists = append(out.lists, c.stmts(it.Stmts))
		}
		return out
	case *syntax.FuncDecl:
		if !c.enter() {
			return nil
		}
		defer c.leave()
		name := ""
		if x.Name != nil {
			name = x.Name.Value
		}
		switch x.Body.Cmd.(type) {
		case nil, *syntax.CallExpr, *syntax.DeclClause, *syntax.LetClause, *syntax.TimeClause, *syntax.CoprocClause:
			// bash and dash want a compound command: f() a is an error.
			c.fail("syntax", "function body is not a compound command")
			return nil
		}
		fn := c.stmt(x.Body)
		if fn == nil {
			return nil
		}
		return &shCmd{kind: cmdFunc, name: name, fn: fn}
	case *syntax.ArithmCmd:
		inner := c.text(posAdd(x.Left, 2), x.Right)
		out := &shCmd{kind: cmdArith, words: []*shWord{c.arithWord(inner)}}
		// bash reads ((...)) as arithmetic, dash as two nested subshells:
		// keep the commands of the second reading too when it parses.
		l, err := shParseLenient(inner, c.depth+1, c.work)
		if err != nil {
			c.err = err
			return nil
		}
		if l != nil {
			out.lists = []*shList{l}
		}
		return out
	case *syntax.TestClause:
		out := &shCmd{kind: cmdCond}
		c.testWords(x.X, out)
		return out
	case *syntax.DeclClause:
		out := &shCmd{kind: cmdSimple, words: []*shWord{c.word(&syntax.Word{Parts: []syntax.WordPart{x.Variant}}, false)}}
		for _, a := range x.Args {
			out.words = append(out.words, c.assignWord(a))
		}
		return out
	case *syntax.LetClause:
		out := &shCmd{kind: cmdSimple, words: []*shWord{shLitWord("let")}}
		for _, e := range x.Exprs {
			if w, ok := e.(*syntax.Word); ok {
				out.words = append(out.words, c.word(w, false))
			} else {
				out.words = append(out.words, c.arithWord(c.nodeText(e)))
			}
		}
		return out
	case *syntax.TimeClause:
		// time is read as the wrapper it also is as a program.
		out := &shCmd{kind: cmdSimple, words: []*shWord{shLitWord("time")}}
		if x.PosixFormat {
			out.words = append(out.words, shLitWord("-p"))
		}
		if x.Stmt == nil {
			return out
		}
		if call, ok := x.Stmt.Cmd.(*syntax.CallExpr); ok && len(call.Assigns) == 0 && len(x.Stmt.Redirs) == 0 {
			for _, w := range call.Args {
				out.words = append(out.words, c.word(w, false))
			}
			return out
		}
		return &shCmd{kind: cmdGroup, lists: []*shList{c.single(x.Stmt)}}
	case *syntax.CoprocClause:
		return c.stmt(x.Stmt)
	}
	c.fail("syntax", "unsupported command "+c.nodeText(n))
	return nil
}

func posAdd(p syntax.Pos, n int) syntax.Pos {
	return syntax.NewPos(p.Offset()+uint(n), p.Line(), p.Col()+uint(n))
}

// call converts a simple command.
func (c *shSyntax) call(x *syntax.CallExpr) *shCmd {
	out := c.newCmd(cmdSimple)
	for _, a := range x.Assigns {
		w := c.assignWord(a)
		if shIsAssignment(w) {
			out.assigns = append(out.assigns, w)
		} else {
			// a[$(cmd)]=v: the subscript runs; read it as a word.
			out.words = append(out.words, w)
		}
	}
	if len(x.Args) > 0 {
		if out.words == nil {
			out.words = make([]*shWord, 0, len(x.Args))
		}
		for _, w := range x.Args {
			out.words = append(out.words, c.word(w, false))
		}
	}
	return out
}

// assignWord writes NAME=value (or a declare operand) as one word.
func (c *shSyntax) assignWord(a *syntax.Assign) *shWord {
	if a.Name == nil {
		if a.Value == nil {
			return shLitWord("")
		}
		return c.word(a.Value, false)
	}
	var b shPartsBuilder
	prefix := a.Name.Value
	if a.Index != nil {
		idx := c.text(a.Index.Pos(), a.Index.End())
		if strings.ContainsAny(idx, "$`") {
			b.text(prefix+"[", false)
			c.parts(&b, c.arithWord(idx).parts, false)
			prefix = "]"
		} else {
			prefix += "[" + idx + "]"
		}
	}
	if a.Naked {
		b.text(prefix, false)
		return &shWord{parts: b.done(), raw: c.nodeText(a)}
	}
	if a.Append {
		prefix += "+"
	}
	b.text(prefix+"=", false)
	switch {
	case a.Array != nil:
		if c.enter() {
			var words []*shWord
			for _, el := range a.Array.Elems {
				if el.Value != nil {
					words = append(words, c.word(el.Value, false))
				}
			}
			c.leave()
			b.part(shPart{kind: partArray, text: c.nodeText(a.Array), words: words})
		}
	case a.Value != nil:
		c.wordParts(&b, a.Value.Parts, false)
	}
	return &shWord{parts: b.done(), raw: c.nodeText(a)}
}

func (c *shSyntax) parts(b *shPartsBuilder, ps []shPart, _ bool) {
	for _, p := range ps {
		if p.kind == partLit {
			b.text(p.text, p.quoted)
		} else {
			b.part(p)
		}
	}
}

// testWords lists the words and operators of [[ ]] in order.
func (c *shSyntax) testWords(e syntax.TestExpr, out *shCmd) {
	switch x := e.(type) {
	case *syntax.Word:
		out.words = append(out.words, c.word(x, false))
	case *syntax.UnaryTest:
		out.words = append(out.words, shLitWord(x.Op.String()))
		c.testWords(x.X, out)
	case *syntax.BinaryTest:
		c.testWords(x.X, out)
		out.words = append(out.words, shLitWord(x.Op.String()))
		c.testWords(x.Y, out)
	case *syntax.ParenTest:
		out.words = append(out.words, shLitWord("("))
		c.testWords(x.X, out)
		out.words = append(out.words, shLitWord(")"))
	}
}

func shLitWord(s string) *shWord {
	return &shWord{parts: []shPart{{kind: partLit, text: s}}, raw: s}
}

// redirect converts a redirection; a here-document keeps its body.
func (c *shSyntax) redirect(r *syntax.Redirect) *shRedir {
	if !c.spend(1) {
		return nil
	}
	out := &shRedir{op: r.Op.String()}
	if r.N != nil {
		out.fd = c.text(r.N.Pos(), r.OpPos)
	}
	out.target = c.word(r.Word, false)
	if r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc {
		return out
	}
	out.stripTabs = r.Op == syntax.DashHdoc
	var delim strings.Builder
	for _, p := range out.target.parts {
		delim.WriteString(p.text)
		if p.kind == partLit && p.quoted {
			out.hereQuoted = true
		}
	}
	out.delim = delim.String()
	if r.Hdoc == nil {
		return out
	}
	// The body as written, without the terminator line's indentation.
	raw := c.nodeText(r.Hdoc)
	if i := strings.LastIndexByte(raw, '\n'); i >= 0 {
		raw = raw[:i+1]
	} else if raw != "" {
		raw += "\n"
	}
	if out.stripTabs {
		lines := strings.SplitAfter(raw, "\n")
		for i, ln := range lines {
			lines[i] = strings.TrimLeft(ln, "\t")
		}
		raw = strings.Join(lines, "")
	}
	out.hereRaw = raw
	if !out.hereQuoted && strings.ContainsAny(raw, "$`\\") {
		if !c.enter() {
			return nil
		}
		defer c.leave()
		var b shPartsBuilder
		for _, p := range r.Hdoc.Parts {
			if lit, ok := p.(*syntax.Lit); ok {
				v := lit.Value
				if out.stripTabs {
					v = shStripTabsAfterNewlines(v, lit.ValuePos.Col() == 1)
				}
				shUnescapeInto(&b, v, shEscHeredoc)
				continue
			}
			c.wordPart(&b, p, true)
		}
		out.hereBody = &shWord{parts: b.done(), raw: raw}
	}
	return out
}

// shStripTabsAfterNewlines removes the tabs <<- strips at the start of
// each line inside a literal of the body.
func shStripTabsAfterNewlines(v string, lineStart bool) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\t' && lineStart {
			continue
		}
		lineStart = v[i] == '\n'
		b.WriteByte(v[i])
	}
	s := b.String()
	return s
}

// arithWord reads arithmetic text as a word whose parts are the
// expansions inside it; the rest stays literal text.
func (c *shSyntax) arithWord(text string) *shWord {
	w := &shWord{raw: text}
	if !strings.ContainsAny(text, "$`") {
		w.parts = []shPart{{kind: partLit, text: text, quoted: true}}
		return w
	}
	sub := &shSyntax{src: text, depth: c.depth, work: c.work}
	p := shBashParsers.Get().(*syntax.Parser)
	doc, err := p.Document(strings.NewReader(text))
	shBashParsers.Put(p)
	if err != nil {
		c.err = shSyntaxErr(err, text)
		return w
	}
	var b shPartsBuilder
	for _, p := range doc.Parts {
		if lit, ok := p.(*syntax.Lit); ok {
			shUnescapeInto(&b, lit.Value, shEscHeredoc)
			continue
		}
		sub.wordPart(&b, p, true)
	}
	if sub.err != nil && c.err == nil {
		c.err = sub.err
	}
	w.parts = b.done()
	return w
}

// word converts a word; inner: inside double quotes or a here-document.
func (c *shSyntax) word(w *syntax.Word, inner bool) *shWord {
	out := c.newWord()
	if w == nil {
		return out
	}
	if !c.spend(1) {
		return out
	}
	var b shPartsBuilder
	b.parts = out.inline[:0]
	c.wordParts(&b, w.Parts, inner)
	out.parts, out.raw = b.done(), c.nodeText(w)
	return out
}

func (c *shSyntax) wordParts(b *shPartsBuilder, ps []syntax.WordPart, inner bool) {
	for _, p := range ps {
		c.wordPart(b, p, inner)
	}
}

// Escape contexts of a literal.
const (
	shEscWord    = iota // unquoted: \x is x, quoted
	shEscDQ             // "...": only \$ \` \" \\ and \newline escape
	shEscHeredoc        // here-document body: \$ \` \\ and \newline
)

// shUnescapeInto removes the quoting backslashes of a literal.
func shUnescapeInto(b *shPartsBuilder, v string, ctx int) {
	inner := ctx != shEscWord
	for v != "" {
		i := strings.IndexByte(v, '\\')
		if i < 0 {
			b.text(v, inner)
			return
		}
		if i > 0 {
			b.text(v[:i], inner)
		}
		if i+1 >= len(v) {
			b.text(`\`, inner)
			return
		}
		n := v[i+1]
		switch {
		case n == '\n':
		case ctx == shEscWord:
			b.text(v[i+1:i+2], true)
		case n == '$' || n == '`' || n == '\\' || n == '"' && ctx == shEscDQ:
			b.text(v[i+1:i+2], true)
		default:
			b.text(v[i:i+2], true)
		}
		v = v[i+2:]
	}
}

func (c *shSyntax) wordPart(b *shPartsBuilder, p syntax.WordPart, inner bool) {
	switch x := p.(type) {
	case *syntax.Lit:
		ctx := shEscWord
		if inner {
			ctx = shEscDQ
		}
		shUnescapeInto(b, x.Value, ctx)
	case *syntax.SglQuoted:
		if x.Dollar {
			b.text(shDecodeANSIC(x.Value), true)
		} else {
			b.text(x.Value, true)
		}
	case *syntax.DblQuoted:
		if !c.enter() {
			return
		}
		defer c.leave()
		if len(x.Parts) == 0 {
			b.text("", true) // "" is an empty quoted word, not nothing
		}
		c.wordParts(b, x.Parts, true)
	case *syntax.ParamExp:
		c.param(b, x, inner)
	case *syntax.CmdSubst:
		b.part(shPart{kind: partCmdSub, quoted: inner, text: c.nodeText(x), sub: c.body(x.Stmts)})
	case *syntax.ArithmExp:
		if !c.enter() {
			return
		}
		defer c.leave()
		open := 3
		if x.Bracket {
			open = 2
		}
		w := c.arithWord(c.text(posAdd(x.Left, open), x.Right))
		b.part(shPart{kind: partArith, quoted: inner, text: c.nodeText(x), words: []*shWord{w}})
	case *syntax.ProcSubst:
		kind := partProcIn
		if x.Op == syntax.CmdOut {
			kind = partProcOut
		}
		b.part(shPart{kind: kind, text: c.nodeText(x), sub: c.body(x.Stmts)})
	case *syntax.ExtGlob:
		b.part(shPart{kind: partGlob, text: c.nodeText(x)})
	default:
		c.fail("syntax", "unsupported word part "+c.nodeText(p))
	}
}

// param converts ${...} and $name.
func (c *shSyntax) param(b *shPartsBuilder, x *syntax.ParamExp, inner bool) {
	if x.Param == nil {
		c.fail("syntax", "bad ${} substitution")
		return
	}
	pt := shPart{kind: partParam, quoted: inner, text: x.Param.Value}
	if x.Short {
		b.part(pt)
		return
	}
	if !c.enter() {
		return
	}
	defer c.leave()
	if x.Index != nil {
		pt.index = c.arithWord(c.nodeText(x.Index))
	}
	switch {
	case x.Length:
		pt.op = "len"
	case x.Excl || x.Names != 0:
		pt.op = "!"
	}
	switch {
	case x.Exp != nil:
		op := x.Exp.Op.String()
		if pt.op == "!" {
			op = "!" + op
		}
		pt.op = op
		pt.arg = c.word(x.Exp.Word, false)
		if x.Exp.Word == nil {
			pt.arg.raw = ""
		}
	case x.Repl != nil:
		var ab shPartsBuilder
		op := "/"
		if x.Repl.All {
			op = "//"
		}
		orig := c.word(x.Repl.Orig, false)
		ps := orig.parts
		if !x.Repl.All && len(ps) > 0 && ps[0].kind == partLit && !ps[0].quoted && (strings.HasPrefix(ps[0].text, "#") || strings.HasPrefix(ps[0].text, "%")) {
			op += ps[0].text[:1]
			ps = append([]shPart{{kind: partLit, text: ps[0].text[1:]}}, ps[1:]...)
		}
		c.parts(&ab, ps, false)
		if x.Repl.With != nil {
			ab.text("/", false)
			c.parts(&ab, c.word(x.Repl.With, false).parts, false)
		}
		pt.op = op
		pt.arg = &shWord{parts: ab.done()}
		if x.Repl.Orig != nil {
			pt.arg.raw = c.text(x.Repl.Orig.Pos(), x.Rbrace)
		}
	case x.Slice != nil:
		pt.op = ":"
		start := x.Param.End()
		if x.Index != nil {
			start = posAdd(x.Index.End(), 1)
		}
		pt.arg = c.arithWord(strings.TrimPrefix(c.text(start, x.Rbrace), ":"))
	}
	b.part(pt)
}

// shPartsBuilder accumulates literal text into as few parts as possible.
type shPartsBuilder struct {
	parts  []shPart
	lit    strings.Builder
	single string // the literal so far, while it is one piece
	multi  bool   // the literal is in lit
	quoted bool
	open   bool
}

func (b *shPartsBuilder) text(s string, quoted bool) {
	if b.open && b.quoted != quoted {
		b.flush()
	}
	b.quoted = quoted
	if !b.open {
		b.open = true
		b.single = s
		return
	}
	if !b.multi {
		b.multi = true
		b.lit.WriteString(b.single)
	}
	b.lit.WriteString(s)
}

func (b *shPartsBuilder) flush() {
	if b.open {
		text := b.single
		if b.multi {
			text = b.lit.String()
			b.lit.Reset()
		}
		b.parts = append(b.parts, shPart{kind: partLit, quoted: b.quoted, text: text})
		b.open, b.multi, b.single = false, false, ""
	}
}

func (b *shPartsBuilder) part(pt shPart) {
	b.flush()
	b.parts = append(b.parts, pt)
}

func (b *shPartsBuilder) done() []shPart {
	b.flush()
	return b.parts
}
