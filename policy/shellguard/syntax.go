package shellguard

import (
	"errors"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// This file reads shell text with mvdan.cc/sh/v3/syntax (bash, which
// parses every POSIX program too) and hands the walker the small tree it
// consumes (cmdList, command, word). The parser decides where commands
// start and end and what is quoted; this file only renames its nodes,
// removes quotes from literals and bounds the depth and the work. What the
// parser refuses is refused (group "parse"), never guessed at.

// converter converts one parse; src is the text the positions refer to.
type converter struct {
	src   string
	depth int
	work  *int
	err   *DeniedError
	words []word // allocation slabs, sized from the text's length
	cmds  []command
}

func (c *converter) newWord() *word {
	if len(c.words) == cap(c.words) {
		c.words = make([]word, 0, min(16, 2+len(c.src)/6))
	}
	c.words = append(c.words, word{})
	return &c.words[len(c.words)-1]
}

func (c *converter) newCmd(kind cmdKind) *command {
	if len(c.cmds) == cap(c.cmds) {
		c.cmds = make([]command, 0, min(8, 1+len(c.src)/32))
	}
	c.cmds = append(c.cmds, command{kind: kind})
	return &c.cmds[len(c.cmds)-1]
}

// parse parses src as a shell script at the given nesting depth.
func parse(src string, depth int, work *int) (*cmdList, *DeniedError) {
	c := &converter{src: src, depth: depth, work: work}
	if depth > maxDepth {
		c.fail("too_deep", "commands are nested more than 8 levels deep")
		return nil, c.err
	}
	if !c.spend(1 + len(src)/64) {
		return nil, c.err
	}
	if shellsyntax.DeepBrackets(src, maxBrackets) >= 0 {
		// The parser backtracks on deep $(( nesting (10,000 levels take
		// seconds); text this deep is refused before it is parsed.
		c.fail("too_deep", "commands are nested more than 8 levels deep")
		return nil, c.err
	}
	f, err := shellsyntax.ParseBash(src)
	if err != nil {
		// What bash refuses, dash may run: ((a; b)) is two subshells to
		// dash, a[$(cmd)] a word. Text either shell reads is walked.
		pf, perr := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(src), "")
		if perr != nil {
			return nil, syntaxErr(err, src)
		}
		f = pf
	}
	l := c.stmts(f.Stmts)
	if c.err != nil {
		return nil, c.err
	}
	return l, nil
}

// maxBrackets bounds the nesting of ( and { outside single quotes,
// four per level of the depth bound: more cannot be within it.
const maxBrackets = 4 * maxDepth

// parseLenient parses text that may or may not be commands; it returns
// no list when it does not parse, and an error only for the limits (depth,
// work), which stop the analysis.
func parseLenient(src string, depth int, work *int) (*cmdList, *DeniedError) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	w := *work
	l, err := parse(src, depth, &w)
	if err != nil {
		if err.Rule == "too_deep" || err.Rule == "too_complex" {
			return nil, err
		}
		return nil, nil
	}
	*work = w
	return l, nil
}

// syntaxErr names a parse error: text that ends too early is
// "unbalanced", anything else "syntax".
func syntaxErr(err error, src string) *DeniedError {
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		// An operator with nothing after it is a syntax error to the
		// shell running the text, not text cut short.
		t := strings.TrimRight(src, " \t\n")
		if pe.Incomplete && (t == "" || !strings.ContainsRune("|&<>", rune(t[len(t)-1]))) || strings.Contains(pe.Text, "without matching") {
			return parseErr("unbalanced", pe.Text, src)
		}
		return parseErr("syntax", pe.Text, src)
	}
	var le syntax.LangError
	if errors.As(err, &le) {
		return parseErr("syntax", le.Feature+" is not supported", src)
	}
	return parseErr("syntax", err.Error(), src)
}

func (c *converter) fail(rule, desc string) {
	if c.err == nil {
		c.err = parseErr(rule, desc, c.src)
	}
}

// spend charges n units of work and fails once the budget is gone.
func (c *converter) spend(n int) bool {
	*c.work -= n
	if *c.work < 0 {
		c.fail("too_complex", "command text takes too much work to analyse")
		return false
	}
	return c.err == nil
}

// enter counts one more level of nesting: compound commands, quotes,
// substitutions and parameter operators all count.
func (c *converter) enter() bool {
	c.depth++
	if c.depth > maxDepth {
		c.fail("too_deep", "commands are nested more than 8 levels deep")
		return false
	}
	return c.err == nil
}

func (c *converter) leave() { c.depth-- }

// text is the source text between two positions.
func (c *converter) text(from, to syntax.Pos) string {
	a, b := int(from.Offset()), int(to.Offset())
	if !from.IsValid() || !to.IsValid() || a > b || b > len(c.src) {
		return ""
	}
	return c.src[a:b]
}

func (c *converter) nodeText(n syntax.Node) string { return c.text(n.Pos(), n.End()) }

func (c *converter) stmts(ss []*syntax.Stmt) *cmdList {
	l := &cmdList{items: make([]*andOr, 0, len(ss))}
	for _, s := range ss {
		if c.err != nil {
			return l
		}
		ao := &andOr{bg: s.Background, pipes: make([]*pipeline, 0, leaves(s, false))}
		c.andOr(s, ao)
		if len(ao.pipes) > 0 {
			l.items = append(l.items, ao)
		}
	}
	return l
}

// andOr flattens && and || into one and-or list.
func (c *converter) andOr(s *syntax.Stmt, ao *andOr) {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && len(s.Redirs) == 0 && (b.Op == syntax.AndStmt || b.Op == syntax.OrStmt) {
		c.andOr(b.X, ao)
		c.andOr(b.Y, ao)
		return
	}
	pl := &pipeline{cmds: make([]*command, 0, leaves(s, true))}
	c.pipeline(s, pl)
	ao.pipes = append(ao.pipes, pl)
}

// leaves counts the members of the pipeline (pipe) or and-or list s
// heads, to size their slices once.
func leaves(s *syntax.Stmt, pipe bool) int {
	b, ok := s.Cmd.(*syntax.BinaryCmd)
	if !ok || len(s.Redirs) > 0 {
		return 1
	}
	if pipe && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) || !pipe && (b.Op == syntax.AndStmt || b.Op == syntax.OrStmt) {
		return leaves(b.X, pipe) + leaves(b.Y, pipe)
	}
	return 1
}

// pipeline flattens | and |& into one pipeline.
func (c *converter) pipeline(s *syntax.Stmt, pl *pipeline) {
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
func (c *converter) body(ss []*syntax.Stmt) *cmdList {
	if !c.enter() {
		return &cmdList{}
	}
	defer c.leave()
	return c.stmts(ss)
}

// stmt converts one statement: its command and its redirections.
func (c *converter) stmt(s *syntax.Stmt) *command {
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
func (c *converter) single(s *syntax.Stmt) *cmdList {
	return c.body([]*syntax.Stmt{s})
}

func (c *converter) command(n syntax.Command) *command {
	switch x := n.(type) {
	case nil:
		return &command{kind: cmdSimple}
	case *syntax.CallExpr:
		return c.call(x)
	case *syntax.Subshell:
		return &command{kind: cmdSubshell, lists: []*cmdList{c.body(x.Stmts)}}
	case *syntax.Block:
		return &command{kind: cmdGroup, lists: []*cmdList{c.body(x.Stmts)}}
	case *syntax.BinaryCmd:
		// && or | under redirections: {a && b; } > f reads the same.
		return &command{kind: cmdGroup, lists: []*cmdList{c.body([]*syntax.Stmt{{Cmd: x, Position: x.Pos()}})}}
	case *syntax.IfClause:
		if !c.enter() {
			return nil
		}
		defer c.leave()
		out := &command{kind: cmdIf}
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
		return &command{kind: cmdLoop, lists: []*cmdList{c.stmts(x.Cond), c.stmts(x.Do)}}
	case *syntax.ForClause:
		if !c.enter() {
			return nil
		}
		defer c.leave()
		out := &command{kind: cmdFor}
		switch lp := x.Loop.(type) {
		case *syntax.WordIter:
			out.name = lp.Name.Value
			for _, w := range lp.Items {
				out.words = append(out.words, c.word(w, false))
			}
		case *syntax.CStyleLoop:
			out.words = []*word{c.arithWord(c.text(posAdd(lp.Lparen, 2), lp.Rparen))}
		}
		out.lists = []*cmdList{c.stmts(x.Do)}
		return out
	case *syntax.CaseClause:
		if !c.enter() {
			return nil
		}
		defer c.leave()
		out := &command{kind: cmdCase, words: []*word{c.word(x.Word, false)}}
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
		return &command{kind: cmdFunc, name: name, fn: fn}
	case *syntax.ArithmCmd:
		inner := c.text(posAdd(x.Left, 2), x.Right)
		out := &command{kind: cmdArith, words: []*word{c.arithWord(inner)}}
		// bash reads ((...)) as arithmetic, dash as two nested subshells:
		// keep the commands of the second reading too when it parses.
		l, err := parseLenient(inner, c.depth+1, c.work)
		if err != nil {
			c.err = err
			return nil
		}
		if l != nil {
			out.lists = []*cmdList{l}
		}
		return out
	case *syntax.TestClause:
		out := &command{kind: cmdCond}
		c.testWords(x.X, out)
		return out
	case *syntax.DeclClause:
		out := &command{kind: cmdSimple, words: []*word{c.word(&syntax.Word{Parts: []syntax.WordPart{x.Variant}}, false)}}
		for _, a := range x.Args {
			out.words = append(out.words, c.assignWord(a))
		}
		return out
	case *syntax.LetClause:
		out := &command{kind: cmdSimple, words: []*word{litWord("let")}}
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
		out := &command{kind: cmdSimple, words: []*word{litWord("time")}}
		if x.PosixFormat {
			out.words = append(out.words, litWord("-p"))
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
		return &command{kind: cmdGroup, lists: []*cmdList{c.single(x.Stmt)}}
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
func (c *converter) call(x *syntax.CallExpr) *command {
	out := c.newCmd(cmdSimple)
	for _, a := range x.Assigns {
		w := c.assignWord(a)
		if isAssignment(w) {
			out.assigns = append(out.assigns, w)
		} else {
			// a[$(cmd)]=v: the subscript runs; read it as a word.
			out.words = append(out.words, w)
		}
	}
	if len(x.Args) > 0 {
		if out.words == nil {
			out.words = make([]*word, 0, len(x.Args))
		}
		for _, w := range x.Args {
			out.words = append(out.words, c.word(w, false))
		}
	}
	return out
}

// assignWord writes NAME=value (or a declare operand) as one word.
func (c *converter) assignWord(a *syntax.Assign) *word {
	if a.Name == nil {
		if a.Value == nil {
			return litWord("")
		}
		return c.word(a.Value, false)
	}
	var b partsBuilder
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
		return &word{parts: b.done(), raw: c.nodeText(a)}
	}
	if a.Append {
		prefix += "+"
	}
	b.text(prefix+"=", false)
	switch {
	case a.Array != nil:
		if c.enter() {
			var words []*word
			for _, el := range a.Array.Elems {
				if el.Value != nil {
					words = append(words, c.word(el.Value, false))
				}
			}
			c.leave()
			b.part(part{kind: partArray, text: c.nodeText(a.Array), words: words})
		}
	case a.Value != nil:
		c.wordParts(&b, a.Value.Parts, false)
	}
	return &word{parts: b.done(), raw: c.nodeText(a)}
}

func (c *converter) parts(b *partsBuilder, ps []part, _ bool) {
	for _, p := range ps {
		if p.kind == partLit {
			b.text(p.text, p.quoted)
		} else {
			b.part(p)
		}
	}
}

// testWords lists the words and operators of [[ ]] in order.
func (c *converter) testWords(e syntax.TestExpr, out *command) {
	switch x := e.(type) {
	case *syntax.Word:
		out.words = append(out.words, c.word(x, false))
	case *syntax.UnaryTest:
		out.words = append(out.words, litWord(x.Op.String()))
		c.testWords(x.X, out)
	case *syntax.BinaryTest:
		c.testWords(x.X, out)
		out.words = append(out.words, litWord(x.Op.String()))
		c.testWords(x.Y, out)
	case *syntax.ParenTest:
		out.words = append(out.words, litWord("("))
		c.testWords(x.X, out)
		out.words = append(out.words, litWord(")"))
	}
}

func litWord(s string) *word {
	return &word{parts: []part{{kind: partLit, text: s}}, raw: s}
}

// redirect converts a redirection; a here-document keeps its body.
func (c *converter) redirect(r *syntax.Redirect) *redir {
	if !c.spend(1) {
		return nil
	}
	out := &redir{op: r.Op.String()}
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
		var b partsBuilder
		for _, p := range r.Hdoc.Parts {
			if lit, ok := p.(*syntax.Lit); ok {
				v := lit.Value
				if out.stripTabs {
					v = stripTabsAfterNewlines(v, lit.ValuePos.Col() == 1)
				}
				unescapeInto(&b, v, escHeredoc)
				continue
			}
			c.wordPart(&b, p, true)
		}
		out.hereBody = &word{parts: b.done(), raw: raw}
	}
	return out
}

// stripTabsAfterNewlines removes the tabs <<- strips at the start of
// each line inside a literal of the body.
func stripTabsAfterNewlines(v string, lineStart bool) string {
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
func (c *converter) arithWord(text string) *word {
	w := &word{raw: text}
	if !strings.ContainsAny(text, "$`") {
		w.parts = []part{{kind: partLit, text: text, quoted: true}}
		return w
	}
	sub := &converter{src: text, depth: c.depth, work: c.work}
	doc, err := shellsyntax.ParseDocument(text)
	if err != nil {
		c.err = syntaxErr(err, text)
		return w
	}
	var b partsBuilder
	for _, p := range doc.Parts {
		if lit, ok := p.(*syntax.Lit); ok {
			unescapeInto(&b, lit.Value, escHeredoc)
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
func (c *converter) word(w *syntax.Word, inner bool) *word {
	out := c.newWord()
	if w == nil {
		return out
	}
	if !c.spend(1) {
		return out
	}
	var b partsBuilder
	b.parts = out.inline[:0]
	c.wordParts(&b, w.Parts, inner)
	out.parts, out.raw = b.done(), c.nodeText(w)
	return out
}

func (c *converter) wordParts(b *partsBuilder, ps []syntax.WordPart, inner bool) {
	for _, p := range ps {
		c.wordPart(b, p, inner)
	}
}

// Escape contexts of a literal.
const (
	escWord    = iota // unquoted: \x is x, quoted
	escDQ             // "...": only \$ \` \" \\ and \newline escape
	escHeredoc        // here-document body: \$ \` \\ and \newline
)

// unescapeInto removes the quoting backslashes of a literal.
func unescapeInto(b *partsBuilder, v string, ctx int) {
	inner := ctx != escWord
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
		case ctx == escWord:
			b.text(v[i+1:i+2], true)
		case n == '$' || n == '`' || n == '\\' || n == '"' && ctx == escDQ:
			b.text(v[i+1:i+2], true)
		default:
			b.text(v[i:i+2], true)
		}
		v = v[i+2:]
	}
}

func (c *converter) wordPart(b *partsBuilder, p syntax.WordPart, inner bool) {
	switch x := p.(type) {
	case *syntax.Lit:
		ctx := escWord
		if inner {
			ctx = escDQ
		}
		unescapeInto(b, x.Value, ctx)
	case *syntax.SglQuoted:
		if x.Dollar {
			b.text(decodeANSIC(x.Value), true)
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
		b.part(part{kind: partCmdSub, quoted: inner, text: c.nodeText(x), sub: c.body(x.Stmts)})
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
		b.part(part{kind: partArith, quoted: inner, text: c.nodeText(x), words: []*word{w}})
	case *syntax.ProcSubst:
		kind := partProcIn
		if x.Op == syntax.CmdOut {
			kind = partProcOut
		}
		b.part(part{kind: kind, text: c.nodeText(x), sub: c.body(x.Stmts)})
	case *syntax.ExtGlob:
		b.part(part{kind: partGlob, text: c.nodeText(x)})
	default:
		c.fail("syntax", "unsupported word part "+c.nodeText(p))
	}
}

// param converts ${...} and $name.
func (c *converter) param(b *partsBuilder, x *syntax.ParamExp, inner bool) {
	if x.Param == nil {
		c.fail("syntax", "bad ${} substitution")
		return
	}
	pt := part{kind: partParam, quoted: inner, text: x.Param.Value}
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
		var ab partsBuilder
		op := "/"
		if x.Repl.All {
			op = "//"
		}
		orig := c.word(x.Repl.Orig, false)
		ps := orig.parts
		if !x.Repl.All && len(ps) > 0 && ps[0].kind == partLit && !ps[0].quoted && (strings.HasPrefix(ps[0].text, "#") || strings.HasPrefix(ps[0].text, "%")) {
			op += ps[0].text[:1]
			ps = append([]part{{kind: partLit, text: ps[0].text[1:]}}, ps[1:]...)
		}
		c.parts(&ab, ps, false)
		if x.Repl.With != nil {
			ab.text("/", false)
			c.parts(&ab, c.word(x.Repl.With, false).parts, false)
		}
		pt.op = op
		pt.arg = &word{parts: ab.done()}
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

// partsBuilder accumulates literal text into as few parts as possible.
type partsBuilder struct {
	parts  []part
	lit    strings.Builder
	single string // the literal so far, while it is one piece
	multi  bool   // the literal is in lit
	quoted bool
	open   bool
}

func (b *partsBuilder) text(s string, quoted bool) {
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

func (b *partsBuilder) flush() {
	if b.open {
		text := b.single
		if b.multi {
			text = b.lit.String()
			b.lit.Reset()
		}
		b.parts = append(b.parts, part{kind: partLit, quoted: b.quoted, text: text})
		b.open, b.multi, b.single = false, false, ""
	}
}

func (b *partsBuilder) part(pt part) {
	b.flush()
	b.parts = append(b.parts, pt)
}

func (b *partsBuilder) done() []part {
	b.flush()
	return b.parts
}
