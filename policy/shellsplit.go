package policy

import (
	"strings"
)

// This file parses shell command text into a small syntax tree. It parses
// the raw text, byte for byte as sh and bash do, so that the structure the
// rules see (where commands start and end, what is quoted) is the one the
// shell will run; normalisation for matching comes later, word by word.
//
// The grammar covers POSIX sh plus the bash forms attackers use: $'...',
// $"...", ${...} operators, $(...), backticks, $((...)), <(...) and >(...),
// here-documents and here-strings, [[ ]], (( )), arrays, function
// definitions and the compound commands. What it cannot parse is refused
// (group "parse"), never guessed at.

// shList is a sequence of and-or lists separated by ; & or newlines.
type shList struct {
	items []*shAndOr
}

// shAndOr is pipelines joined by && and ||, possibly run in the background.
type shAndOr struct {
	pipes []*shPipeline
	bg    bool
}

// shPipeline is commands joined by | or |&.
type shPipeline struct {
	cmds []*shCmd
}

type shCmdKind uint8

const (
	cmdSimple shCmdKind = iota
	cmdSubshell
	cmdGroup
	cmdIf    // lists: cond, body, [cond, body]..., [else]
	cmdLoop  // while/until: cond, body
	cmdFor   // for/select: body; words and name
	cmdCase  // words: subject + patterns; lists: bodies
	cmdFunc  // name, fn
	cmdArith // (( )) and for (( ))
	cmdCond  // [[ ]]: words
)

// shCmd is one command of a pipeline.
type shCmd struct {
	kind    shCmdKind
	assigns []*shWord // NAME=value prefixes of a simple command
	words   []*shWord
	redirs  []*shRedir
	lists   []*shList
	name    string // for/select variable, function name
	fn      *shCmd // function body
}

type shPartKind uint8

const (
	partLit     shPartKind = iota // literal text
	partParam                     // $name, ${name...}
	partCmdSub                    // $(...) and `...`
	partArith                     // $((...)): only the substitutions inside matter
	partProcIn                    // <(...)
	partProcOut                   // >(...)
	partArray                     // ( ... ) of NAME=( ... )
	partGlob                      // extglob @(...) and friends, kept literally
)

// shPart is one piece of a word.
type shPart struct {
	kind   shPartKind
	quoted bool      // literal: quoted or escaped; expansion: inside "..."
	text   string    // literal text, parameter name, or source text
	op     string    // parameter operator: ":-", "#", "/", ":" (substring)...
	arg    *shWord   // operator argument, or array index with op "[]"
	index  *shWord   // array subscript
	sub    *shList   // command or process substitution
	words  []*shWord // array elements; substitutions inside $((...))
}

// shWord is one word as written: its parts and its source text.
type shWord struct {
	parts  []shPart
	raw    string
	inline [1]shPart // storage for the common one-part word
}

// shRedir is a redirection. Here-documents keep their body.
type shRedir struct {
	fd         string
	op         string
	target     *shWord
	delim      string
	stripTabs  bool
	hereQuoted bool
	hereRaw    string  // body as written
	hereBody   *shWord // body parsed for expansions (unquoted delimiter)
}

type shTerm uint16

const (
	termParen shTerm = 1 << iota // )
	termBrace                    // }
	termThen                     // then
	termElse                     // elif else fi
	termDo                       // do
	termDone                     // done
	termEsac                     // esac
	termCase                     // ;; ;& ;;&
)

// shParser is a recursive-descent parser over src. One parser handles a
// text and everything nested in it except backtick bodies and here-doc
// bodies, which are parsed from their own (unescaped) text.
type shParser struct {
	src     string
	pos     int
	depth   int
	work    *int
	pending []*shRedir
	err     *ShellDeniedError
	words   []shWord // allocation pools
	cmds    []shCmd
}

func (p *shParser) newWord() *shWord {
	if len(p.words) == cap(p.words) {
		p.words = make([]shWord, 0, 16)
	}
	p.words = append(p.words, shWord{})
	return &p.words[len(p.words)-1]
}

func (p *shParser) newCmd(kind shCmdKind) *shCmd {
	if len(p.cmds) == cap(p.cmds) {
		p.cmds = make([]shCmd, 0, 8)
	}
	p.cmds = append(p.cmds, shCmd{kind: kind})
	return &p.cmds[len(p.cmds)-1]
}

// shParseOld parses src as a shell script at the given nesting depth.
func shParseOld(src string, depth int, work *int) (*shList, *ShellDeniedError) {
	p := &shParser{src: src, depth: depth, work: work}
	if depth > shMaxDepth {
		p.fail("too_deep", "commands are nested more than 8 levels deep")
		return nil, p.err
	}
	l := p.parseList(0)
	if p.err == nil && p.pos < len(p.src) {
		p.fail("syntax", "unexpected "+p.tokenText())
	}
	if p.err != nil {
		return nil, p.err
	}
	return l, nil
}

func (p *shParser) fail(rule, desc string) {
	if p.err == nil {
		p.err = shParseErr(rule, desc, p.src)
	}
	p.pos = len(p.src)
}

// spend charges n units of work and fails once the budget is gone.
func (p *shParser) spend(n int) bool {
	*p.work -= n
	if *p.work < 0 {
		p.fail("too_complex", "command text takes too much work to analyse")
		return false
	}
	return p.err == nil
}

func (p *shParser) enter() bool {
	p.depth++
	if p.depth > shMaxDepth {
		p.fail("too_deep", "commands are nested more than 8 levels deep")
		return false
	}
	return true
}

func (p *shParser) leave() { p.depth-- }

func (p *shParser) eof() bool { return p.pos >= len(p.src) }

func (p *shParser) peekByte(off int) byte {
	if p.pos+off < len(p.src) {
		return p.src[p.pos+off]
	}
	return 0
}

func (p *shParser) has(prefix string) bool {
	return strings.HasPrefix(p.src[p.pos:], prefix)
}

// tokenText describes what is at the current position for error messages.
func (p *shParser) tokenText() string {
	if p.eof() {
		return "end of command"
	}
	rest := p.src[p.pos:]
	if len(rest) > 12 {
		rest = rest[:12]
	}
	return "\"" + rest + "\""
}

func shIsMeta(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
		return true
	}
	return false
}

// skipBlanks skips spaces, tabs, line continuations and comments, but not
// newlines.
func (p *shParser) skipBlanks() {
	for !p.eof() {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t':
			p.pos++
		case c == '\\' && p.peekByte(1) == '\n':
			p.pos += 2
		case c == '#':
			for !p.eof() && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

// skipNewlines skips blanks and newlines, reading pending here-documents
// after each newline.
func (p *shParser) skipNewlines() {
	for {
		p.skipBlanks()
		if p.eof() || p.src[p.pos] != '\n' {
			return
		}
		p.pos++
		p.readHeredocs()
	}
}

// bareWord returns the plain word at the current position when it is made
// of ordinary characters only and ends at a metacharacter; "" otherwise.
// Reserved words are recognised through it.
func (p *shParser) bareWord() string {
	i := p.pos
	for i < len(p.src) {
		c := p.src[i]
		if shIsMeta(c) {
			break
		}
		switch c {
		case '\'', '"', '\\', '$', '`':
			return ""
		}
		i++
	}
	return p.src[p.pos:i]
}

func (p *shParser) atTerm(t shTerm) bool {
	if p.eof() || t == 0 {
		return false
	}
	c := p.src[p.pos]
	if t&termParen != 0 && c == ')' {
		return true
	}
	if t&termCase != 0 && (p.has(";;") || p.has(";&")) {
		return true
	}
	switch p.bareWord() {
	case "}":
		return t&termBrace != 0
	case "then":
		return t&termThen != 0
	case "elif", "else", "fi":
		return t&termElse != 0
	case "do":
		return t&termDo != 0
	case "done":
		return t&termDone != 0
	case "esac":
		return t&termEsac != 0
	}
	return false
}

// expectWord consumes the reserved word w or fails.
func (p *shParser) expectWord(w string) bool {
	p.skipNewlines()
	if p.bareWord() != w {
		if p.eof() {
			p.fail("unbalanced", "missing \""+w+"\"")
		} else {
			p.fail("syntax", "expected \""+w+"\" before "+p.tokenText())
		}
		return false
	}
	p.pos += len(w)
	return true
}

func (p *shParser) parseList(t shTerm) *shList {
	l := &shList{}
	for p.err == nil {
		p.skipNewlines()
		if p.eof() || p.atTerm(t) {
			break
		}
		ao := p.parseAndOr(t)
		if ao == nil {
			break
		}
		l.items = append(l.items, ao)
		p.skipBlanks()
		if p.eof() {
			break
		}
		switch c := p.src[p.pos]; {
		case c == '\n':
		case c == '&' && !p.has("&&") && !p.has("&>"):
			p.pos++
			ao.bg = true
		case c == ';' && !p.has(";;") && !p.has(";&"):
			p.pos++
		case p.atTerm(t):
			return l
		default:
			p.fail("syntax", "unexpected "+p.tokenText())
		}
	}
	return l
}

func (p *shParser) parseAndOr(t shTerm) *shAndOr {
	ao := &shAndOr{}
	for p.err == nil {
		pl := p.parsePipeline(t)
		if pl == nil {
			return nil
		}
		ao.pipes = append(ao.pipes, pl)
		p.skipBlanks()
		if !p.has("&&") && !p.has("||") {
			return ao
		}
		p.pos += 2
		p.skipNewlines()
	}
	return nil
}

func (p *shParser) parsePipeline(t shTerm) *shPipeline {
	pl := &shPipeline{}
	p.skipBlanks()
	for p.bareWord() == "!" {
		p.pos++
		p.skipBlanks()
	}
	for p.err == nil {
		c := p.parseCommand(t)
		if c == nil {
			return nil
		}
		pl.cmds = append(pl.cmds, c)
		p.skipBlanks()
		switch {
		case p.has("||"):
			return pl
		case p.has("|&"):
			p.pos += 2
		case p.has("|"):
			p.pos++
		default:
			return pl
		}
		p.skipNewlines()
	}
	return nil
}

func (p *shParser) parseCommand(t shTerm) *shCmd {
	if !p.spend(1) {
		return nil
	}
	p.skipBlanks()
	if p.eof() {
		p.fail("syntax", "a command is missing at the end")
		return nil
	}
	switch c := p.src[p.pos]; c {
	case '(':
		if p.peekByte(1) == '(' {
			if cmd := p.tryArithCommand(); cmd != nil || p.err != nil {
				return cmd
			}
		}
		p.pos++
		if !p.enter() {
			return nil
		}
		body := p.parseList(termParen)
		p.leave()
		if p.err != nil {
			return nil
		}
		if p.eof() || p.src[p.pos] != ')' {
			p.fail("unbalanced", "unbalanced parenthesis")
			return nil
		}
		p.pos++
		return p.compoundRedirs(&shCmd{kind: cmdSubshell, lists: []*shList{body}})
	case ')', ';', '|', '\n':
		p.fail("syntax", "unexpected "+p.tokenText())
		return nil
	case '&':
		if !p.has("&>") {
			p.fail("syntax", "unexpected "+p.tokenText())
			return nil
		}
	}
	switch w := p.bareWord(); w {
	case "{":
		p.pos++
		if !p.enter() {
			return nil
		}
		body := p.parseList(termBrace)
		p.leave()
		if !p.expectWord("}") {
			return nil
		}
		return p.compoundRedirs(&shCmd{kind: cmdGroup, lists: []*shList{body}})
	case "if":
		return p.parseIf()
	case "while", "until":
		p.pos += len(w)
		return p.parseLoop()
	case "for", "select":
		p.pos += len(w)
		return p.parseFor()
	case "case":
		p.pos += len(w)
		return p.parseCase()
	case "function":
		p.pos += len(w)
		return p.parseFunctionKeyword()
	case "[[":
		p.pos += len(w)
		return p.parseCond()
	case "coproc":
		p.pos += len(w)
		p.skipBlanks()
		if name := p.bareWord(); name != "" && name != "{" && p.src[p.pos+len(name):] != "" {
			// coproc NAME compound: the name is followed by a compound command.
			save := p.pos
			p.pos += len(name)
			p.skipBlanks()
			if bw := p.bareWord(); bw != "{" && !p.has("(") {
				p.pos = save
			}
		}
		return p.parseCommand(t)
	case "}", "then", "elif", "else", "fi", "do", "done", "esac":
		p.fail("syntax", "unexpected \""+w+"\"")
		return nil
	}
	return p.parseSimple()
}

// compoundRedirs reads the redirections after a compound command.
func (p *shParser) compoundRedirs(c *shCmd) *shCmd {
	for p.err == nil {
		p.skipBlanks()
		if !p.atRedirect() {
			break
		}
		if r := p.parseRedirect(); r != nil {
			c.redirs = append(c.redirs, r)
		}
	}
	if p.err != nil {
		return nil
	}
	return c
}

func (p *shParser) parseIf() *shCmd {
	p.pos += 2
	if !p.enter() {
		return nil
	}
	defer p.leave()
	c := &shCmd{kind: cmdIf}
	for {
		cond := p.parseList(termThen)
		if !p.expectWord("then") {
			return nil
		}
		body := p.parseList(termElse)
		c.lists = append(c.lists, cond, body)
		p.skipNewlines()
		switch p.bareWord() {
		case "elif":
			p.pos += 4
			continue
		case "else":
			p.pos += 4
			c.lists = append(c.lists, p.parseList(termElse))
			if !p.expectWord("fi") {
				return nil
			}
		default:
			if !p.expectWord("fi") {
				return nil
			}
		}
		return p.compoundRedirs(c)
	}
}

func (p *shParser) parseLoop() *shCmd {
	if !p.enter() {
		return nil
	}
	defer p.leave()
	cond := p.parseList(termDo)
	if !p.expectWord("do") {
		return nil
	}
	body := p.parseList(termDone)
	if !p.expectWord("done") {
		return nil
	}
	return p.compoundRedirs(&shCmd{kind: cmdLoop, lists: []*shList{cond, body}})
}

func (p *shParser) parseFor() *shCmd {
	if !p.enter() {
		return nil
	}
	defer p.leave()
	p.skipBlanks()
	c := &shCmd{kind: cmdFor}
	if p.has("((") {
		arith := p.tryArithCommand()
		if arith == nil {
			if p.err == nil {
				p.fail("syntax", "bad for (( )) header")
			}
			return nil
		}
		c.kind = cmdFor
		c.words = arith.words
		p.skipBlanks()
		if p.has(";") {
			p.pos++
		}
	} else {
		name := p.bareWord()
		if name == "" {
			p.fail("syntax", "missing variable name after for")
			return nil
		}
		p.pos += len(name)
		c.name = name
		p.skipNewlines()
		if p.bareWord() == "in" {
			p.pos += 2
			for p.err == nil {
				p.skipBlanks()
				if p.eof() || p.src[p.pos] == ';' || p.src[p.pos] == '\n' {
					break
				}
				if shIsMeta(p.src[p.pos]) {
					p.fail("syntax", "unexpected "+p.tokenText())
					return nil
				}
				c.words = append(c.words, p.readWord())
			}
		}
		p.skipBlanks()
		if p.has(";") && !p.has(";;") {
			p.pos++
		}
	}
	p.skipNewlines()
	if p.bareWord() == "{" {
		// bash accepts a brace group in place of do ... done.
		body := p.parseCommand(0)
		if body == nil {
			return nil
		}
		c.lists = []*shList{{items: []*shAndOr{{pipes: []*shPipeline{{cmds: []*shCmd{body}}}}}}}
		return p.compoundRedirs(c)
	}
	if !p.expectWord("do") {
		return nil
	}
	c.lists = []*shList{p.parseList(termDone)}
	if !p.expectWord("done") {
		return nil
	}
	return p.compoundRedirs(c)
}

func (p *shParser) parseCase() *shCmd {
	if !p.enter() {
		return nil
	}
	defer p.leave()
	p.skipBlanks()
	if p.eof() || shIsMeta(p.src[p.pos]) {
		p.fail("syntax", "missing word after case")
		return nil
	}
	c := &shCmd{kind: cmdCase, words: []*shWord{p.readWord()}}
	if !p.expectWord("in") {
		return nil
	}
	for p.err == nil {
		p.skipNewlines()
		if p.bareWord() == "esac" {
			p.pos += 4
			return p.compoundRedirs(c)
		}
		if p.eof() {
			p.fail("unbalanced", "missing \"esac\"")
			return nil
		}
		if p.src[p.pos] == '(' {
			p.pos++
		}
		for p.err == nil {
			p.skipBlanks()
			if p.eof() || shIsMeta(p.src[p.pos]) {
				p.fail("syntax", "bad case pattern at "+p.tokenText())
				return nil
			}
			c.words = append(c.words, p.readWord())
			p.skipBlanks()
			if p.has("|") {
				p.pos++
				continue
			}
			if p.has(")") {
				p.pos++
				break
			}
			p.fail("syntax", "bad case pattern at "+p.tokenText())
			return nil
		}
		c.lists = append(c.lists, p.parseList(termCase|termEsac))
		p.skipNewlines()
		switch {
		case p.has(";;&"):
			p.pos += 3
		case p.has(";;"), p.has(";&"):
			p.pos += 2
		}
	}
	return nil
}

func (p *shParser) parseFunctionKeyword() *shCmd {
	p.skipBlanks()
	if p.eof() || shIsMeta(p.src[p.pos]) {
		p.fail("syntax", "missing function name")
		return nil
	}
	name := p.readWord()
	p.skipBlanks()
	if p.has("(") {
		p.pos++
		p.skipBlanks()
		if !p.has(")") {
			p.fail("syntax", "expected ) in function definition")
			return nil
		}
		p.pos++
	}
	return p.functionBody(shWordText(name))
}

func (p *shParser) functionBody(name string) *shCmd {
	p.skipNewlines()
	if !p.enter() {
		return nil
	}
	defer p.leave()
	body := p.parseCommand(0)
	if body == nil {
		return nil
	}
	if body.kind == cmdSimple {
		p.fail("syntax", "function body is not a compound command")
		return nil
	}
	return &shCmd{kind: cmdFunc, name: name, fn: body}
}

// parseCond reads [[ ... ]]: everything up to ]] is words, operators too.
func (p *shParser) parseCond() *shCmd {
	c := &shCmd{kind: cmdCond}
	for p.err == nil {
		p.skipBlanks()
		if p.eof() {
			p.fail("unbalanced", "missing \"]]\"")
			return nil
		}
		if p.src[p.pos] == '\n' {
			p.pos++
			p.readHeredocs()
			continue
		}
		if p.bareWord() == "]]" {
			p.pos += 2
			return p.compoundRedirs(c)
		}
		if shIsMeta(p.src[p.pos]) {
			n := 1
			for _, op := range []string{"&&", "||", "<<", ">>"} {
				if p.has(op) {
					n = 2
				}
			}
			c.words = append(c.words, &shWord{parts: []shPart{{kind: partLit, text: p.src[p.pos : p.pos+n]}}, raw: p.src[p.pos : p.pos+n]})
			p.pos += n
			continue
		}
		c.words = append(c.words, p.readWord())
	}
	return nil
}

// tryArithCommand parses (( ... )) when the text is arithmetic; it returns
// nil without error when it is a nested subshell instead.
func (p *shParser) tryArithCommand() *shCmd {
	save := p.pos
	p.pos += 2
	w, ok := p.readArith()
	if !ok {
		if p.err != nil {
			return nil
		}
		p.pos = save
		return nil
	}
	c := &shCmd{kind: cmdArith, words: []*shWord{w}}
	// bash reads ((...)) as arithmetic, dash as two nested subshells:
	// keep the commands of the second reading too when it parses.
	l, err := shParseLenientOld(w.raw, p.depth+1, p.work)
	if err != nil {
		p.err = err
		p.pos = len(p.src)
		return nil
	}
	if l != nil {
		c.lists = []*shList{l}
	}
	return p.compoundRedirs(c)
}

// shParseLenientOld parses text that may or may not be commands; it returns
// no list when it does not parse, and an error only for the limits (depth,
// work), which stop the analysis.
func shParseLenientOld(src string, depth int, work *int) (*shList, *ShellDeniedError) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	w := *work
	l, err := shParseOld(src, depth, &w)
	if err != nil {
		if err.Rule == "too_deep" || err.Rule == "too_complex" {
			return nil, err
		}
		return nil, nil
	}
	*work = w
	return l, nil
}

func (p *shParser) parseSimple() *shCmd {
	c := p.newCmd(cmdSimple)
	for p.err == nil {
		p.skipBlanks()
		if p.eof() {
			break
		}
		if p.atRedirect() {
			if r := p.parseRedirect(); r != nil {
				c.redirs = append(c.redirs, r)
			}
			continue
		}
		ch := p.src[p.pos]
		if shIsMeta(ch) && !p.atProcSub() {
			if ch == '(' && len(c.words) == 1 && len(c.assigns) == 0 && len(c.redirs) == 0 {
				p.pos++
				p.skipBlanks()
				if !p.has(")") {
					p.fail("syntax", "unexpected \"(\"")
					return nil
				}
				p.pos++
				return p.functionBody(shWordText(c.words[0]))
			}
			break
		}
		w := p.readWord()
		if w == nil {
			break
		}
		if len(c.words) == 0 && shIsAssignment(w) {
			c.assigns = append(c.assigns, w)
			continue
		}
		if c.words == nil {
			c.words = make([]*shWord, 0, 4)
		}
		c.words = append(c.words, w)
	}
	if p.err != nil {
		return nil
	}
	if len(c.words) == 0 && len(c.assigns) == 0 && len(c.redirs) == 0 {
		p.fail("syntax", "unexpected "+p.tokenText())
		return nil
	}
	return c
}

func (p *shParser) atProcSub() bool {
	return (p.has("<(") || p.has(">("))
}

// atRedirect reports whether a redirection operator starts here (with an
// optional fd number or {name} before it).
func (p *shParser) atRedirect() bool {
	i := p.pos
	if i < len(p.src) && p.src[i] == '{' {
		j := i + 1
		for j < len(p.src) && shIsNameByte(p.src[j], j == i+1) {
			j++
		}
		if j > i+1 && j < len(p.src) && p.src[j] == '}' && j+1 < len(p.src) && (p.src[j+1] == '<' || p.src[j+1] == '>') {
			i = j + 1
		}
	}
	for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
		i++
	}
	if i >= len(p.src) {
		return false
	}
	switch p.src[i] {
	case '<', '>':
		if i == p.pos && i+1 < len(p.src) && p.src[i+1] == '(' {
			return false // process substitution
		}
		return true
	case '&':
		return i == p.pos && i+1 < len(p.src) && p.src[i+1] == '>'
	}
	return false
}

var shRedirOps = []string{"&>>", "<<<", "<<-", "&>", "<<", "<>", "<&", ">>", ">&", ">|", "<", ">"}

func (p *shParser) parseRedirect() *shRedir {
	if !p.spend(1) {
		return nil
	}
	r := &shRedir{}
	start := p.pos
	if p.src[p.pos] == '{' {
		p.pos = strings.IndexByte(p.src[p.pos:], '}') + p.pos + 1
	}
	for !p.eof() && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	r.fd = p.src[start:p.pos]
	for _, op := range shRedirOps {
		if p.has(op) {
			r.op = op
			p.pos += len(op)
			break
		}
	}
	p.skipBlanks()
	if p.eof() || (shIsMeta(p.src[p.pos]) && !p.atProcSub()) {
		p.fail("syntax", "missing target of redirection "+r.op)
		return nil
	}
	r.target = p.readWord()
	if r.target == nil {
		return nil
	}
	if r.op == "<<" || r.op == "<<-" {
		r.stripTabs = r.op == "<<-"
		var b strings.Builder
		for _, pt := range r.target.parts {
			if pt.kind == partLit {
				b.WriteString(pt.text)
				if pt.quoted {
					r.hereQuoted = true
				}
			} else {
				b.WriteString(pt.text)
			}
		}
		r.delim = b.String()
		p.pending = append(p.pending, r)
	}
	return r
}

// readHeredocs reads the bodies of the here-documents opened on the line
// that just ended. A missing delimiter ends the body at end of text, as
// bash does (with a warning).
func (p *shParser) readHeredocs() {
	pending := p.pending
	p.pending = nil
	for _, r := range pending {
		var b strings.Builder
		for !p.eof() {
			end := strings.IndexByte(p.src[p.pos:], '\n')
			next := len(p.src)
			line := p.src[p.pos:]
			if end >= 0 {
				line = p.src[p.pos : p.pos+end]
				next = p.pos + end + 1
			}
			if r.stripTabs {
				line = strings.TrimLeft(line, "\t")
			}
			p.pos = next
			if line == r.delim {
				break
			}
			b.WriteString(line)
			b.WriteByte('\n')
		}
		r.hereRaw = b.String()
		if !r.hereQuoted && strings.ContainsAny(r.hereRaw, "$`\\") {
			sub := &shParser{src: r.hereRaw, depth: p.depth, work: p.work}
			if !sub.enter() {
				p.err = sub.err
				p.pos = len(p.src)
				return
			}
			parts := sub.readParts(modeHeredoc)
			if sub.err != nil {
				p.err = sub.err
				p.pos = len(p.src)
				return
			}
			r.hereBody = &shWord{parts: parts, raw: r.hereRaw}
		}
	}
}

// Word reading modes.
const (
	modeWord    = iota // unquoted word: ends at a metacharacter
	modeDQ             // inside "...": ends at "
	modeHeredoc        // here-document body: ends at end of text
	modeBrace          // operator argument inside ${...}: ends at }
	modeArith          // inside $((...)): ends at ))
)

// readWord reads one unquoted word.
func (p *shParser) readWord() *shWord {
	if !p.spend(1) {
		return nil
	}
	start := p.pos
	w := p.newWord()
	parts := p.readPartsInto(modeWord, w.inline[:0])
	if p.err != nil {
		return nil
	}
	w.parts, w.raw = parts, p.src[start:p.pos]
	return w
}

// oldPartsBuilder accumulates literal text into as few parts as possible.
// A literal that is one piece of the source is kept as a substring
// without copying.
type oldPartsBuilder struct {
	parts  []shPart
	lit    strings.Builder
	single string // the literal so far, while it is one piece
	multi  bool   // the literal is in lit
	quoted bool
	open   bool
}

func (b *oldPartsBuilder) text(s string, quoted bool) {
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

func (b *oldPartsBuilder) byte(c byte, quoted bool) {
	if b.open && b.quoted != quoted {
		b.flush()
	}
	b.quoted = quoted
	if !b.open {
		b.open = true
		b.multi = true
	} else if !b.multi {
		b.multi = true
		b.lit.WriteString(b.single)
	}
	b.lit.WriteByte(c)
}

func (b *oldPartsBuilder) flush() {
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

func (b *oldPartsBuilder) part(pt shPart) {
	b.flush()
	b.parts = append(b.parts, pt)
}

func (b *oldPartsBuilder) done() []shPart {
	b.flush()
	return b.parts
}

// readParts reads word parts in the given mode up to its terminator, which
// it leaves unread (except in modeHeredoc, which reads to the end).
func (p *shParser) readParts(mode int) []shPart {
	return p.readPartsInto(mode, nil)
}

func (p *shParser) readPartsInto(mode int, store []shPart) []shPart {
	b := oldPartsBuilder{parts: store}
	inner := mode == modeDQ || mode == modeHeredoc // expansions are quoted
	braceDepth := 0
	parenDepth := 0
	for p.err == nil && !p.eof() {
		c := p.src[p.pos]
		switch mode {
		case modeWord:
			if shIsMeta(c) {
				if (c == '<' || c == '>') && p.peekByte(1) == '(' && p.pos > 0 && len(b.parts) == 0 && !b.open {
					p.readProcSub(&b)
					continue
				}
				return b.done()
			}
		case modeDQ:
			if c == '"' {
				return b.done()
			}
		case modeBrace:
			if c == '}' && braceDepth == 0 {
				return b.done()
			}
		case modeArith:
			if c == ')' {
				if parenDepth == 0 && p.peekByte(1) == ')' {
					return b.done()
				}
				if parenDepth == 0 {
					p.fail("syntax", "unbalanced parenthesis in arithmetic")
					return nil
				}
				parenDepth--
			} else if c == '(' {
				parenDepth++
			}
		}
		switch c {
		case '\\':
			if p.peekByte(1) == '\n' {
				p.pos += 2
				continue
			}
			if p.pos+1 >= len(p.src) {
				b.byte('\\', inner)
				p.pos++
				continue
			}
			next := p.src[p.pos+1]
			if inner || mode == modeArith {
				// In "..." and here-documents only these are escapes.
				if next == '$' || next == '`' || next == '\\' || (next == '"' && mode == modeDQ) {
					b.byte(next, true)
				} else {
					b.byte('\\', true)
					b.byte(next, true)
				}
			} else {
				b.byte(next, true)
			}
			p.pos += 2
		case '\'':
			if inner || mode == modeArith {
				b.byte(c, inner)
				p.pos++
				continue
			}
			end := strings.IndexByte(p.src[p.pos+1:], '\'')
			if end < 0 {
				p.fail("unbalanced", "unbalanced single quote")
				return nil
			}
			b.text(p.src[p.pos+1:p.pos+1+end], true)
			p.pos += end + 2
		case '"':
			if inner || mode == modeArith {
				b.byte(c, inner)
				p.pos++
				continue
			}
			p.pos++
			p.readDQ(&b)
		case '`':
			p.readBacktick(&b, inner)
		case '$':
			p.readDollar(&b, inner, mode)
		default:
			if mode == modeBrace {
				if c == '{' {
					braceDepth++
				} else if c == '}' {
					braceDepth--
				}
			}
			if mode == modeWord && c == '=' && p.peekByte(1) == '(' && shIsAssignPrefix(p.src[p.wordStart(&b):p.pos]) {
				b.byte('=', false)
				p.pos++
				p.readArray(&b)
				continue
			}
			if mode == modeWord && (c == '@' || c == '!' || c == '?' || c == '*' || c == '+') && p.peekByte(1) == '(' {
				p.readExtglob(&b)
				continue
			}
			// Copy a run of ordinary bytes at once.
			j := p.pos + 1
			for j < len(p.src) && shPlainByte(p.src[j], mode) {
				j++
			}
			b.text(p.src[p.pos:j], inner)
			p.pos = j
		}
	}
	if p.err != nil {
		return nil
	}
	switch mode {
	case modeDQ:
		p.fail("unbalanced", "unbalanced double quote")
		return nil
	case modeBrace:
		p.fail("unbalanced", "unterminated ${")
		return nil
	case modeArith:
		p.fail("unbalanced", "unterminated $((")
		return nil
	}
	return b.done()
}

// wordStart finds where the word being read began (for NAME=( detection):
// the word starts after the last metacharacter before pos.
func (p *shParser) wordStart(b *oldPartsBuilder) int {
	if len(b.parts) > 0 {
		return p.pos // a quoted or expanded part came first: not NAME=
	}
	i := p.pos
	for i > 0 && !shIsMeta(p.src[i-1]) {
		i--
	}
	return i
}

func shPlainByte(c byte, mode int) bool {
	switch c {
	case '\\', '\'', '"', '`', '$', '=', '@', '!', '?', '*', '+':
		return false
	}
	switch mode {
	case modeWord:
		return !shIsMeta(c)
	case modeBrace:
		return c != '{' && c != '}'
	case modeArith:
		return c != '(' && c != ')'
	}
	return true
}

func (p *shParser) readDQ(b *oldPartsBuilder) {
	if !p.enter() {
		return
	}
	parts := p.readParts(modeDQ)
	p.leave()
	if p.err != nil {
		return
	}
	p.pos++ // closing quote
	if len(parts) == 0 {
		b.text("", true) // "" is an empty quoted word, not nothing
	}
	for _, pt := range parts {
		if pt.kind == partLit {
			b.text(pt.text, true)
		} else {
			pt.quoted = true
			b.part(pt)
		}
	}
}

func (p *shParser) readBacktick(b *oldPartsBuilder, inner bool) {
	start := p.pos
	p.pos++
	var body strings.Builder
	for {
		if p.eof() {
			p.fail("unbalanced", "unbalanced backtick")
			return
		}
		c := p.src[p.pos]
		if c == '`' {
			p.pos++
			break
		}
		if c == '\\' && p.pos+1 < len(p.src) {
			n := p.src[p.pos+1]
			if n == '`' || n == '\\' || n == '$' || (inner && n == '"') {
				body.WriteByte(n)
				p.pos += 2
				continue
			}
		}
		body.WriteByte(c)
		p.pos++
	}
	sub, err := shParseOld(body.String(), p.depth+1, p.work)
	if err != nil {
		p.err = err
		p.pos = len(p.src)
		return
	}
	b.part(shPart{kind: partCmdSub, quoted: inner, text: p.src[start:p.pos], sub: sub})
}

func (p *shParser) readProcSub(b *oldPartsBuilder) {
	kind := partProcIn
	if p.src[p.pos] == '>' {
		kind = partProcOut
	}
	p.readParenSub(b, kind, false, "unterminated process substitution")
}

// readParenSub reads a two-byte opener ("$(", "<(", ">("), a command list
// and its ")" as one part of kind.
func (p *shParser) readParenSub(b *oldPartsBuilder, kind shPartKind, quoted bool, unterminated string) {
	start := p.pos
	p.pos += 2
	if !p.enter() {
		return
	}
	sub := p.parseList(termParen)
	p.leave()
	if p.err != nil {
		return
	}
	if p.eof() || p.src[p.pos] != ')' {
		p.fail("unbalanced", unterminated)
		return
	}
	p.pos++
	b.part(shPart{kind: kind, quoted: quoted, text: p.src[start:p.pos], sub: sub})
}

func (p *shParser) readArray(b *oldPartsBuilder) {
	start := p.pos
	p.pos++
	if !p.enter() {
		return
	}
	defer p.leave()
	var words []*shWord
	for p.err == nil {
		p.skipNewlines()
		if p.eof() {
			p.fail("unbalanced", "unterminated array")
			return
		}
		if p.src[p.pos] == ')' {
			p.pos++
			break
		}
		if shIsMeta(p.src[p.pos]) {
			p.fail("syntax", "unexpected "+p.tokenText()+" in array")
			return
		}
		words = append(words, p.readWord())
	}
	b.part(shPart{kind: partArray, text: p.src[start:p.pos], words: words})
}

func (p *shParser) readExtglob(b *oldPartsBuilder) {
	start := p.pos
	p.pos += 2
	depth := 1
	for depth > 0 {
		if p.eof() {
			p.fail("unbalanced", "unbalanced parenthesis in pattern")
			return
		}
		switch p.src[p.pos] {
		case '(':
			depth++
		case ')':
			depth--
		case '\\':
			p.pos++
		}
		p.pos++
	}
	b.part(shPart{kind: partGlob, text: p.src[start:p.pos]})
}

// readArith reads the body of $((...)) or ((...)) after the opening
// parentheses, and the closing )). ok is false when the text is not
// arithmetic (no matching "))").
func (p *shParser) readArith() (*shWord, bool) {
	start := p.pos
	if !p.enter() {
		return nil, false
	}
	save := *p
	parts := p.readParts(modeArith)
	p.leave()
	if p.err != nil {
		if p.err.Rule == "too_deep" || p.err.Rule == "too_complex" {
			return nil, false
		}
		// Not arithmetic after all: let the caller try a subshell.
		*p = save
		p.depth--
		p.err = nil
		return nil, false
	}
	w := &shWord{parts: parts, raw: p.src[start:p.pos]}
	p.pos += 2
	return w, true
}

// readDollar reads what follows a $.
func (p *shParser) readDollar(b *oldPartsBuilder, inner bool, mode int) {
	start := p.pos
	next := p.peekByte(1)
	switch {
	case next == '\'' && !inner && mode != modeArith:
		end := p.pos + 2
		for end < len(p.src) && p.src[end] != '\'' {
			if p.src[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(p.src) {
			p.fail("unbalanced", "unbalanced $' quote")
			return
		}
		b.text(shDecodeANSIC(p.src[p.pos+2:end]), true)
		p.pos = end + 1
	case next == '"' && !inner && mode != modeArith:
		p.pos += 2
		p.readDQ(b)
	case next == '(' && p.peekByte(2) == '(':
		p.pos += 3
		if w, ok := p.readArith(); ok {
			b.part(shPart{kind: partArith, quoted: inner, text: p.src[start:p.pos], words: []*shWord{w}})
			return
		}
		if p.err != nil {
			return
		}
		p.pos = start
		p.readCmdSub(b, inner)
	case next == '(':
		p.readCmdSub(b, inner)
	case next == '{':
		p.readBraceParam(b, inner)
	case shIsNameByte(next, true):
		j := p.pos + 2
		for j < len(p.src) && shIsNameByte(p.src[j], false) {
			j++
		}
		b.part(shPart{kind: partParam, quoted: inner, text: p.src[p.pos+1 : j]})
		p.pos = j
	case next >= '0' && next <= '9', strings.IndexByte("@*#?-$!", next) >= 0 && next != 0:
		b.part(shPart{kind: partParam, quoted: inner, text: string(next)})
		p.pos += 2
	default:
		b.byte('$', inner)
		p.pos++
	}
}

func (p *shParser) readCmdSub(b *oldPartsBuilder, inner bool) {
	p.readParenSub(b, partCmdSub, inner, "unterminated $(")
}

// readBraceParam reads ${...}.
func (p *shParser) readBraceParam(b *oldPartsBuilder, inner bool) {
	p.pos += 2
	if !p.enter() {
		return
	}
	defer p.leave()
	pt := shPart{kind: partParam, quoted: inner}
	prefix := ""
	switch c := p.peekByte(0); {
	case c == '#' && p.peekByte(1) != '}' && p.peekByte(1) != 0:
		prefix = "#"
		p.pos++
	case c == '!' && p.peekByte(1) != '}':
		prefix = "!"
		p.pos++
	}
	// Name.
	i := p.pos
	switch c := p.peekByte(0); {
	case shIsNameByte(c, true):
		for i < len(p.src) && shIsNameByte(p.src[i], false) {
			i++
		}
	case c >= '0' && c <= '9':
		for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
		}
	case c != 0 && strings.IndexByte("@*#?-$!", c) >= 0:
		i++
	default:
		p.fail("syntax", "bad ${} substitution")
		return
	}
	pt.text = p.src[p.pos:i]
	p.pos = i
	if p.peekByte(0) == '[' {
		p.pos++
		idx := p.readUntilByte(']')
		if p.err != nil {
			return
		}
		pt.index = idx
	}
	if prefix == "!" {
		pt.op = "!"
		if c := p.peekByte(0); c == '*' || c == '@' {
			p.pos++
		}
	}
	if prefix == "#" {
		pt.op = "len"
	}
	if p.eof() {
		p.fail("unbalanced", "unterminated ${")
		return
	}
	if p.peekByte(0) != '}' {
		ops := []string{":-", ":=", ":?", ":+", "-", "=", "?", "+", "##", "#", "%%", "%", "//", "/#", "/%", "/", "^^", "^", ",,", ",", "@", ":"}
		op := ""
		for _, o := range ops {
			if p.has(o) {
				op = o
				break
			}
		}
		if op == "" || prefix == "#" {
			p.fail("syntax", "bad ${} substitution")
			return
		}
		p.pos += len(op)
		if pt.op == "!" {
			op = "!" + op
		}
		pt.op = op
		argStart := p.pos
		parts := p.readParts(modeBrace)
		if p.err != nil {
			return
		}
		pt.arg = &shWord{parts: parts, raw: p.src[argStart:p.pos]}
	}
	if p.peekByte(0) != '}' {
		p.fail("unbalanced", "unterminated ${")
		return
	}
	p.pos++
	b.part(pt)
}

// readUntilByte reads an array subscript up to the closing byte.
func (p *shParser) readUntilByte(end byte) *shWord {
	start := p.pos
	var b oldPartsBuilder
	depth := 0
	for p.err == nil {
		if p.eof() {
			p.fail("unbalanced", "unterminated subscript")
			return nil
		}
		c := p.src[p.pos]
		if c == end && depth == 0 {
			w := &shWord{parts: b.done(), raw: p.src[start:p.pos]}
			p.pos++
			return w
		}
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		}
		switch c {
		case '$':
			p.readDollar(&b, true, modeArith)
		case '`':
			p.readBacktick(&b, true)
		case '\\':
			if p.pos+1 < len(p.src) {
				b.byte(p.src[p.pos+1], true)
				p.pos += 2
			} else {
				p.pos++
			}
		default:
			b.byte(c, true)
			p.pos++
		}
	}
	return nil
}

func shIsNameByte(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}

func shIsName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !shIsNameByte(s[i], i == 0) {
			return false
		}
	}
	return true
}

// shIsAssignPrefix reports whether s (the word so far) is NAME or NAME+ or
// NAME[sub] before an "=".
func shIsAssignPrefix(s string) bool {
	s = strings.TrimSuffix(s, "+")
	if i := strings.IndexByte(s, '['); i > 0 && strings.HasSuffix(s, "]") {
		s = s[:i]
	}
	return shIsName(s)
}

// shIsAssignment reports whether a word is NAME=value (an assignment when
// it comes before the command name).
func shIsAssignment(w *shWord) bool {
	if len(w.parts) == 0 || w.parts[0].kind != partLit || w.parts[0].quoted {
		return false
	}
	t := w.parts[0].text
	eq := strings.IndexByte(t, '=')
	if eq <= 0 {
		return false
	}
	return shIsAssignPrefix(t[:eq])
}

// shWordText is the word's literal text with quotes removed and expansions
// left as written; for names (functions, here-doc delimiters).
func shWordText(w *shWord) string {
	var b strings.Builder
	for _, pt := range w.parts {
		b.WriteString(pt.text)
	}
	return b.String()
}
