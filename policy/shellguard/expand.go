package shellguard

import (
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// This file expands words the way the shell will before it runs a command:
// brace expansion, parameter and command substitution, arithmetic, field
// splitting. The analysis cannot know everything (the environment, the
// output of most commands), so every argument is kept in two views:
//
//   - the empty view (arg.e), where what is unknown expands to nothing,
//     as an unset variable does in the clean environment tools run in;
//     rules match this view, so r${u}m and rm$IFS-rf$IFS/ read as rm -rf /;
//   - the placeholder view (arg.p), where what is unknown is kept as
//     written (${name}, $(...)); payloads handed to an inner shell use it,
//     so the inner analysis meets the same unknowns, and a command name
//     that is unknown in this view is refused as dynamic.

// originSet says where data that is not statically known came from.
type originSet uint8

const (
	originFetch  originSet = 1 << iota // a network download (curl, wget...)
	originSocket                       // a raw socket (nc, /dev/tcp...)
	originDecode                       // a decoder or code generator (base64 -d, xxd -r, python...)
	originOther                        // any other command's output
)

// data is what a command reads as data or code: its possible contents
// when they can be worked out statically, and where unknown parts came
// from.
type data struct {
	texts   []string // possible contents; nil when unknown
	origins originSet
	list    *listing // when unknown: the paths a listing command wrote
	file    bool     // when unknown: the contents of a file (< FILE, cat FILE)
	shell   bool     // what a shell or interpreter printed (judged as shell_to_socket)
	partial []string // when unknown: texts known to be among the contents
}

func (d *data) known() bool { return d != nil && d.texts != nil }

// variable is what the analysis knows of a shell variable. A variable holds
// every value assigned to it anywhere in the script, so that a value set on
// a branch that does not run is still considered.
type variable struct {
	vals    []string // possible values; nil when unknown
	arr     []string // elements, when assigned as an array
	isArr   bool
	origins originSet // sources of an unknown value
	glob    bool      // the values are pathname patterns (for v in /dev/sd*)
}

// arg is one argument after expansion.
type arg struct {
	e, p    string         // empty view (normalised for matching) and placeholder view (raw)
	drop    bool           // disappears in the empty view: an unquoted unknown alone
	dyn     bool           // contains something unknown
	glob    bool           // contains an unquoted pathname pattern
	susp    bool           // built with string surgery on an unknown value
	dynBase bool           // the last path component holds something unknown
	origins originSet      // sources of the unknown parts
	data    *data          // process substitution <(...): what reading it gives
	procOut []*syntax.Stmt // process substitution >(...): what reads it
}

const fakePID = "99999"

// Words are expanded by mvdan.cc/sh/v3/expand (quote removal, brace,
// tilde, parameter and arithmetic expansion, $'...', field splitting)
// under a configuration that runs nothing and reads no directory. Before
// that, each expansion of the word is resolved by the analysis: command
// substitutions are walked, parameters looked up. What is known becomes
// a slot, a variable of the expansion's own environment holding the
// values it may take; what is not becomes a mark, two bytes (markByte
// and a private-use rune) that stand for it in the expanded text and
// carry the placeholder, the origins and the quoting. Marks are never
// split or globbed, so an unknown value stays one opaque piece, as the
// deny rules need: it may be anything.

const (
	markByte = '\x01' // refused in command text (checkInput)
	markBase = 0xE000 // first rune of the marks
	maxMarks = 0x1900 // marks of one word: 0xE000 to 0xF8FF
)

// mark is something a word's expansion holds that is not plain text.
type mark struct {
	ph      string // placeholder view of an unknown
	text    string // text of a known mark (/dev/fd/63)
	quoted  bool
	unknown bool
	susp    bool
	origins originSet
	data    *data
	procOut []*syntax.Stmt
}

// slot is a parameter or substitution resolved to values: each a list
// of elements (one for a scalar); a nil one is unset.
type slot struct {
	alts   [][]string
	pick   int
	assign string // ${name:=word} of an unknown name: the name
}

// expansion is the expansion of one word.
type expansion struct {
	w     *walker
	sc    *scope
	slots []slot
	marks []mark
	glob  bool // the expander asked for a directory: the field is a pattern
	// patterns: the word's fields are patterns whatever the expander made
	// of them (a variable holding patterns, an extended pattern !(x)).
	patterns bool
	assigned [][]string // per slot, the values ${name:=word} assigned
}

// expandWords expands the words of a command into the argument lists it
// may run with (more than one when variables have several values).
func (w *walker) expandWords(words []*syntax.Word, sc *scope) [][]arg {
	variants := [][]arg{make([]arg, 0, len(words))}
	for _, word := range words {
		if lit, ok := plainWord(word); ok {
			if !w.spend(2) {
				return nil
			}
			a := arg{e: normalise(lit), p: lit}
			for i := range variants {
				variants[i] = append(variants[i], a)
			}
			continue
		}
		alts := w.expandWord(word, sc, false)
		if w.err != nil {
			return nil
		}
		if len(alts) == 1 {
			for i := range variants {
				variants[i] = append(variants[i], alts[0]...)
			}
			continue
		}
		if len(variants)*len(alts) > maxVariants {
			w.failParse("too_complex", "variables take too many combinations of values")
			return nil
		}
		next := make([][]arg, 0, len(variants)*len(alts))
		for _, v := range variants {
			for _, a := range alts {
				next = append(next, append(append(make([]arg, 0, len(v)+len(a)), v...), a...))
			}
		}
		variants = next
	}
	return variants
}

// plainWord returns the text of a word expansion leaves as written:
// quoted text and literals without escapes, braces, patterns or tilde.
func plainWord(word *syntax.Word) (string, bool) {
	if len(word.Parts) == 1 {
		return plainPart(word.Parts[0])
	}
	var b strings.Builder
	for _, p := range word.Parts {
		s, ok := plainPart(p)
		if !ok {
			return "", false
		}
		b.WriteString(s)
	}
	return b.String(), true
}

func plainPart(p syntax.WordPart) (string, bool) {
	switch x := p.(type) {
	case *syntax.Lit:
		return x.Value, !strings.ContainsAny(x.Value, "\\{*?[~\x01")
	case *syntax.SglQuoted:
		if x.Dollar {
			return decodeANSIC(x.Value), true
		}
		return x.Value, true
	case *syntax.DblQuoted:
		if len(x.Parts) == 0 {
			return "", true
		}
		if lit, ok := x.Parts[0].(*syntax.Lit); ok && len(x.Parts) == 1 && !strings.ContainsAny(lit.Value, "\\\x01") {
			return lit.Value, true
		}
	}
	return "", false
}

// expandWord expands one word into alternatives, each a list of fields.
// In an assignment there is no brace expansion and no field splitting.
func (w *walker) expandWord(word *syntax.Word, sc *scope, assign bool) [][]arg {
	if !w.spend(2) {
		return nil
	}
	if lit, ok := plainWord(word); ok {
		return [][]arg{{{e: normalise(lit), p: lit}}}
	}
	x := &expansion{w: w, sc: sc, patterns: hasExtGlob(word)}
	rw := x.word(word, false)
	words := []*syntax.Word{rw}
	if !assign {
		if words = x.braces(rw); words == nil {
			w.failParse("too_complex", "brace expansion makes too many words")
		}
	}
	if w.err != nil {
		return nil
	}
	n := 1
	for _, s := range x.slots {
		if n *= len(s.alts); n > maxVariants {
			w.failParse("too_complex", "variables take too many combinations of values")
			return nil
		}
	}
	cfg := &expand.Config{Env: x, ReadDir2: x.readDir, ExtGlob: true}
	out := make([][]arg, 0, n)
	for {
		var fields []arg
		if assign {
			s, err := expand.Literal(cfg, rw)
			if err != nil {
				fields = []arg{x.failed(word)}
			} else if a, ok := x.arg(s, false); ok {
				fields = []arg{a}
			}
		} else {
			for f, err := range expand.FieldsSeq(cfg, words...) {
				if err != nil {
					fields = []arg{x.failed(word)}
					break
				}
				if a, ok := x.arg(f, x.glob || x.patterns); ok {
					fields = append(fields, a)
				}
				x.glob = false
			}
		}
		out = append(out, fields)
		if !x.next() {
			break
		}
	}
	x.assign()
	return out
}

// expandDocument expands a here-document body; what is unknown is kept
// as written.
func (w *walker) expandDocument(body *syntax.Word, sc *scope) (string, originSet) {
	x := &expansion{w: w, sc: sc}
	s, err := expand.Document(&expand.Config{Env: x}, x.word(body, true))
	if err != nil {
		return w.text(body), originOther
	}
	var b strings.Builder
	var origins originSet
	for i := 0; i < len(s); {
		m, n := x.pieceAt(s, i)
		i += n
		if m.unknown {
			b.WriteString(m.ph)
			origins |= m.origins
		} else {
			b.WriteString(m.text)
		}
	}
	return b.String(), origins
}

// braces returns the words brace expansion makes of a rewritten word,
// or nil when they are more than maxBrace. An empty alternative ({/,})
// makes no word, as in bash.
func (x *expansion) braces(rw *syntax.Word) []*syntax.Word {
	if !syntax.SplitBraces(rw) {
		return []*syntax.Word{rw}
	}
	var fill func(ps []syntax.WordPart)
	fill = func(ps []syntax.WordPart) {
		for _, p := range ps {
			if br, ok := p.(*syntax.BraceExp); ok {
				for _, el := range br.Elems {
					if len(el.Parts) == 0 {
						el.Parts = []syntax.WordPart{x.markLit(mark{})}
					}
					fill(el.Parts)
				}
			}
		}
	}
	fill(rw.Parts)
	var out []*syntax.Word
	for w, err := range expand.BracesSeq(nil, rw) {
		if err != nil || len(out) == maxBrace {
			return nil
		}
		out = append(out, w)
	}
	return out
}

// next moves to the next combination of the slots' values.
func (x *expansion) next() bool {
	for i := range x.slots {
		s := &x.slots[i]
		if s.pick++; s.pick < len(s.alts) {
			return true
		}
		s.pick = 0
	}
	return false
}

// assign records what ${name:=word} assigned to unknown names.
func (x *expansion) assign() {
	for i, vals := range x.assigned {
		if vals == nil {
			continue
		}
		if slices.ContainsFunc(vals, func(v string) bool { return strings.IndexByte(v, markByte) >= 0 }) {
			vals = nil // an unknown value
		}
		x.w.setVar(x.slots[i].assign, vals, 0)
	}
}

// failed is the field of a word the expander refused: unknown.
func (x *expansion) failed(word *syntax.Word) arg {
	return arg{p: x.w.text(word), dyn: true, origins: originOther}
}

// Get answers the expander: slots by their names, and the few variables
// it reads itself (IFS for splitting, HOME for a tilde the script did not
// move).
func (x *expansion) Get(name string) expand.Variable {
	if i, ok := x.slotOf(name); ok {
		s := &x.slots[i]
		if v := s.alts[s.pick]; v != nil {
			return expand.Variable{Set: true, Kind: expand.Indexed, List: v}
		}
		return expand.Variable{}
	}
	str := func(s string) expand.Variable { return expand.Variable{Set: true, Kind: expand.String, Str: s} }
	switch {
	case name == "IFS" || name == "HOME":
		return str(defaultVars[name]) // as the script found them
	case strings.HasPrefix(name, "HOME "):
		return str("~" + name[len("HOME "):])
	}
	return expand.Variable{}
}

// slotOf returns the slot a variable name stands for.
func (x *expansion) slotOf(name string) (int, bool) {
	num, ok := strings.CutPrefix(name, string(markByte))
	i, err := strconv.Atoi(num)
	return i, ok && err == nil && i >= 0 && i < len(x.slots)
}

// Each lists no variables: ${!prefix*} is resolved before.
func (x *expansion) Each(func(string, expand.Variable) bool) {}

// Set records ${name:=word} of an unknown name.
func (x *expansion) Set(name string, vr expand.Variable) error {
	if i, ok := x.slotOf(name); ok && x.slots[i].assign != "" {
		if x.assigned == nil {
			x.assigned = make([][]string, len(x.slots))
		}
		x.assigned[i] = append(x.assigned[i], vr.String())
	}
	return nil
}

// readDir is asked only for a field with an unquoted pattern; it reads
// nothing and answers that nothing matches.
func (x *expansion) readDir(string) ([]fs.DirEntry, error) {
	x.glob = true
	return nil, nil
}

// mark stands for m in the text the expander sees.
func (x *expansion) mark(m mark) string {
	if len(x.marks) >= maxMarks {
		x.w.failParse("too_complex", "command text takes too much work to analyse")
		return ""
	}
	x.marks = append(x.marks, m)
	return string([]rune{markByte, rune(markBase + len(x.marks) - 1)})
}

func (x *expansion) markLit(m mark) *syntax.Lit { return &syntax.Lit{Value: x.mark(m)} }

// pieceAt returns what stands at s[i] and its length: a mark, or a plain
// byte, which reads as a mark of known text.
func (x *expansion) pieceAt(s string, i int) (mark, int) {
	if s[i] == markByte && i+1 < len(s) {
		r, n := utf8.DecodeRuneInString(s[i+1:])
		if k := int(r) - markBase; k >= 0 && k < len(x.marks) {
			return x.marks[k], 1 + n
		}
	}
	return mark{text: s[i : i+1]}, 1
}

// slot adds a slot and returns the parameter that reads it; list is ""
// for a scalar, "@" or "*" for all elements.
func (x *expansion) slot(alts [][]string, list string) *syntax.ParamExp {
	x.slots = append(x.slots, slot{alts: alts})
	pe := &syntax.ParamExp{Param: &syntax.Lit{Value: string(markByte) + strconv.Itoa(len(x.slots)-1)}}
	if list != "" {
		pe.Index = litWord(list)
	}
	return pe
}

// values is a scalar slot that takes each of vals.
func (x *expansion) values(vals ...string) *syntax.ParamExp {
	alts := make([][]string, len(vals))
	for i, v := range vals {
		alts[i] = []string{v}
	}
	return x.slot(alts, "")
}

// dyn counts what makes an expansion more than one known text.
func (x *expansion) dyn() int {
	n := 0
	for _, m := range x.marks {
		if m.unknown {
			n++
		}
	}
	for _, s := range x.slots {
		if len(s.alts) > 1 {
			n++
		}
	}
	return n
}

// arg turns an expanded field into an argument: marks leave the empty
// view and put their placeholders in the other. ok is false when the
// field is only unquoted expansions that came out empty: it is no field.
func (x *expansion) arg(f string, glob bool) (arg, bool) {
	if strings.IndexByte(f, markByte) < 0 {
		return arg{e: normalise(f), p: f, glob: glob}, true
	}
	a := arg{glob: glob}
	var e, p strings.Builder
	has := false
	onlyUnknown := true // only unquoted unknowns so far
	for i := 0; i < len(f); {
		m, n := x.pieceAt(f, i)
		i += n
		a.origins |= m.origins
		a.susp = a.susp || m.susp
		if m.data != nil {
			a.data = m.data
		}
		if m.procOut != nil {
			a.procOut = m.procOut
		}
		if m.unknown {
			a.dyn, a.dynBase, has = true, true, true
			p.WriteString(m.ph)
			onlyUnknown = onlyUnknown && !m.quoted
			continue
		}
		e.WriteString(m.text)
		p.WriteString(m.text)
		if strings.IndexByte(m.text, '/') >= 0 {
			a.dynBase = false
		}
		if m.quoted || m.text != "" {
			has, onlyUnknown = true, false
		}
	}
	if !has {
		return arg{}, false
	}
	a.e, a.p = normalise(e.String()), p.String()
	a.drop = onlyUnknown && a.dyn
	return a, true
}

// word returns wd with its expansions resolved to slots and marks;
// quoted: inside "..." or a here-document.
func (x *expansion) word(wd *syntax.Word, quoted bool) *syntax.Word {
	if wd == nil {
		return nil
	}
	out := &syntax.Word{Parts: make([]syntax.WordPart, 0, len(wd.Parts))}
	for i, p := range wd.Parts {
		if lit, ok := p.(*syntax.Lit); ok && i == 0 && !quoted && strings.HasPrefix(lit.Value, "~") {
			// ~ stands for the home directory in the rules; a script
			// that sets HOME moves it.
			rest := lit.Value[1:]
			if v := x.w.vars["HOME"]; v != nil && v.vals != nil && (rest == "" || rest[0] == '/') {
				out.Parts = append(out.Parts, &syntax.DblQuoted{Parts: []syntax.WordPart{x.values(v.vals...)}})
				out.Parts = appendUnescaped(out.Parts, rest)
				continue
			}
		}
		if lit, ok := p.(*syntax.Lit); ok && !quoted && strings.IndexByte(lit.Value, '\\') >= 0 {
			out.Parts = appendUnescaped(out.Parts, lit.Value)
			continue
		}
		out.Parts = append(out.Parts, x.part(p, quoted))
	}
	return out
}

// appendUnescaped appends an unquoted literal with its backslashes
// removed, each escaped character quoted (the expander keeps them in an
// assignment's value).
func appendUnescaped(ps []syntax.WordPart, v string) []syntax.WordPart {
	for {
		i := strings.IndexByte(v, '\\')
		if i < 0 || i+1 == len(v) {
			break
		}
		if i > 0 {
			ps = append(ps, &syntax.Lit{Value: v[:i]})
		}
		_, n := utf8.DecodeRuneInString(v[i+1:])
		if v[i+1] != '\n' {
			ps = append(ps, &syntax.SglQuoted{Value: v[i+1 : i+1+n]})
		}
		v = v[i+1+n:]
	}
	if v != "" {
		ps = append(ps, &syntax.Lit{Value: v})
	}
	return ps
}

func (x *expansion) part(p syntax.WordPart, quoted bool) syntax.WordPart {
	switch p := p.(type) {
	case *syntax.SglQuoted:
		if p.Value == "" {
			return x.markLit(mark{quoted: true}) // '' is an empty quoted word, not nothing
		}
		if p.Dollar {
			return &syntax.SglQuoted{Value: decodeANSIC(p.Value)}
		}
	case *syntax.DblQuoted:
		if len(p.Parts) == 0 {
			return x.markLit(mark{quoted: true})
		}
		q := &syntax.DblQuoted{Parts: make([]syntax.WordPart, len(p.Parts))}
		for i, ip := range p.Parts {
			q.Parts[i] = x.part(ip, true)
		}
		return q
	case *syntax.ParamExp:
		return x.param(p, quoted)
	case *syntax.CmdSubst:
		d := x.w.walkSub(p.Stmts, x.sc, nil)
		if d != nil && d.list != nil && d.list.mass {
			// Every object a tool lists reads as what stands for all of
			// them: $(docker ps -aq) is --all, $(pgrep .) is -1.
			return x.values(d.list.words()...)
		}
		if !d.known() {
			return x.markLit(mark{unknown: true, ph: x.w.text(p), quoted: quoted, origins: d.origins})
		}
		// What is known of the output keeps where it came from, on the
		// first field it makes.
		prefix := ""
		if d.origins != 0 {
			prefix = x.mark(mark{origins: d.origins, quoted: quoted})
		}
		vals := make([]string, len(d.texts))
		for i, t := range d.texts {
			vals[i] = prefix + strings.TrimRight(t, "\n")
		}
		return x.values(vals...)
	case *syntax.ArithmExp:
		if text, ok := x.arithText(p.X); ok {
			if v, ok := x.w.arithValue(text, x.sc); ok {
				return x.values(strconv.FormatInt(v, 10))
			}
		}
		return x.markLit(mark{unknown: true, ph: x.w.text(p), quoted: quoted})
	case *syntax.ProcSubst:
		if p.Op == syntax.CmdIn {
			return x.markLit(mark{text: "/dev/fd/63", quoted: true, data: x.w.walkSub(p.Stmts, x.sc, nil)})
		}
		return x.markLit(mark{text: "/dev/fd/62", quoted: true, procOut: p.Stmts})
	}
	return p
}

// static expands a word that must be one known text.
func (x *expansion) static(wd *syntax.Word) (string, bool) {
	y := &expansion{w: x.w, sc: x.sc}
	rw := y.word(wd, false)
	if x.w.err != nil || y.dyn() > 0 {
		return "", false
	}
	s, err := expand.Literal(&expand.Config{Env: y}, rw)
	if err != nil {
		return "", false
	}
	a, _ := y.arg(s, false)
	return a.p, true
}

// arithText is the text of an arithmetic expression with its expansions
// replaced by their values, when they are known.
func (x *expansion) arithText(e syntax.ArithmExpr) (string, bool) {
	if e == nil {
		return "", true
	}
	if src := x.w.text(e); !strings.ContainsAny(src, "$`") {
		return src, true
	}
	return x.static(x.w.arithWord(e))
}

// arithSubs walks the substitutions of an arithmetic command and what
// its variables would run.
func (w *walker) arithSubs(e syntax.ArithmExpr, sc *scope) {
	x := &expansion{w: w, sc: sc}
	if text, ok := x.arithText(e); ok {
		w.arithValue(text, sc)
	}
}

// walkSubsIn walks the command and process substitutions inside a node
// without expanding it.
func (w *walker) walkSubsIn(n syntax.Node, sc *scope) {
	syntax.Walk(n, func(m syntax.Node) bool {
		switch m := m.(type) {
		case *syntax.CmdSubst:
			w.walkSub(m.Stmts, sc, nil)
			return false
		case *syntax.ProcSubst:
			w.walkSub(m.Stmts, sc, nil)
			return false
		}
		return true
	})
}

// opOf names the operator of ${...}.
func opOf(pe *syntax.ParamExp) string {
	switch {
	case pe.Length:
		return "len"
	case pe.Excl || pe.Names != 0:
		return "!"
	case pe.Exp != nil:
		return pe.Exp.Op.String()
	case pe.Repl != nil:
		if pe.Repl.All {
			return "//"
		}
		if lit, ok := firstLit(pe.Repl.Orig); ok && (strings.HasPrefix(lit, "#") || strings.HasPrefix(lit, "%")) {
			return "/" + lit[:1]
		}
		return "/"
	case pe.Slice != nil:
		return ":"
	}
	return ""
}

// firstLit is the text of w's first part when that is a literal.
func firstLit(w *syntax.Word) (string, bool) {
	if w != nil && len(w.Parts) > 0 {
		if lit, ok := w.Parts[0].(*syntax.Lit); ok {
			return lit.Value, true
		}
	}
	return "", false
}

// param resolves ${...} and $name.
func (x *expansion) param(pe *syntax.ParamExp, quoted bool) syntax.WordPart {
	w, sc := x.w, x.sc
	if !pe.Short || pe.Index != nil {
		// Substitutions in a subscript or an operator word may run
		// whatever the operator does with them (${x?$(cmd)} runs cmd for
		// the message, ${a[$(cmd)]} for the index): walk them all.
		w.walkSubsIn(pe, sc)
	}
	name := pe.Param.Value
	v, known := w.lookupVar(name, sc)
	vals, arr, isArr, origins := v.vals, v.arr, v.isArr, v.origins
	if v := w.vars[name]; known && v != nil && v.glob {
		x.patterns = true
	}
	op := opOf(pe)
	ph := "${" + name + "}"
	if op == "" && pe.Index == nil && sc.posKnown && !known {
		if a, ok := positional(name, sc); ok && a.dyn {
			ph = a.p
		}
		if name == "@" || name == "*" {
			elems := make([]string, len(sc.pos))
			for i, a := range sc.pos {
				elems[i] = a.v()
				if a.dyn {
					elems[i] = x.mark(mark{unknown: true, ph: a.p, quoted: quoted, origins: a.origins})
				}
			}
			return x.slot([][]string{elems}, name)
		}
	}
	if op != "" || pe.Index != nil {
		ph = w.text(pe)
	}
	unknown := func(susp bool) syntax.WordPart {
		return x.markLit(mark{unknown: true, ph: ph, quoted: quoted, susp: susp, origins: origins})
	}
	// ${x:-word} and its kin of an unknown x give their word: x reads as
	// unset (as set for :+), and := assigns what the word gives.
	opWord := func() syntax.WordPart {
		if pe.Exp == nil {
			return x.values("")
		}
		alts := [][]string{nil}
		if op == ":+" || op == "+" {
			alts = [][]string{{"set"}}
		}
		out := x.slot(alts, "")
		if op == ":=" || op == "=" {
			x.slots[len(x.slots)-1].assign = name
		}
		out.Exp = &syntax.Expansion{Op: pe.Exp.Op, Word: x.word(pe.Exp.Word, quoted)}
		return out
	}
	array := isArr || pe.Index != nil
	if !known {
		// An unknown value: its word for the default operators, else an
		// unknown, built with string surgery (susp) only from a scalar.
		switch op {
		case ":-", "-", ":=", "=", ":+", "+":
			return opWord()
		case "", ":?", "?", "len":
			return unknown(false)
		case "!":
			return unknown(!array)
		case "@":
			lit, _ := firstLit(pe.Exp.Word)
			return unknown(!array && lit == "P")
		}
		return unknown(!array && envLike(name))
	}
	if array {
		if op == "len" {
			if isArr {
				return x.values(strconv.Itoa(len(arr)))
			}
			return unknown(false)
		}
		idx := ""
		if pe.Index != nil {
			idx = strings.TrimSpace(w.text(pe.Index))
		}
		all := idx == "@" || idx == "*" || pe.Index == nil && (name == "@" || name == "*")
		var elems []string
		switch n, err := strconv.Atoi(idx); {
		case all && isArr:
			elems = arr
		case all:
			elems = vals[:1]
		case pe.Index != nil && (err != nil || n < 0):
			return unknown(false)
		case isArr && n < len(arr):
			elems = arr[n : n+1]
		case !isArr && n == 0:
			elems = vals[:1]
		default:
			elems = []string{""}
		}
		if op != "" && op != ":-" && op != "-" {
			if len(elems) == 1 {
				return x.known(pe, elems, quoted, unknown)
			}
			return unknown(false)
		}
		if len(elems) == 0 && (op == ":-" || op == "-") {
			return opWord()
		}
		if !all {
			return x.values(elems[0])
		}
		list := "*"
		if quoted && (name == "@" || strings.HasSuffix(idx, "@")) {
			list = "@"
		}
		return x.slot([][]string{elems}, list)
	}
	return x.known(pe, vals, quoted, unknown)
}

// known resolves ${name OP arg} of known values: the expander applies
// the operator, unless its argument is not known text (then the result
// is unknown too) or the operator is one it reads otherwise than bash.
func (x *expansion) known(pe *syntax.ParamExp, vals []string, quoted bool, unknown func(bool) syntax.WordPart) syntax.WordPart {
	op := opOf(pe)
	static := func(words ...*syntax.Word) ([]*syntax.Word, bool) {
		before := x.dyn()
		out := make([]*syntax.Word, len(words))
		for i, wd := range words {
			out[i] = x.word(wd, quoted)
		}
		return out, x.dyn() == before
	}
	out := x.values(vals...)
	switch op {
	case "", "len":
		out.Length = pe.Length
	case ":?", "?":
	case ":-", "-", ":=", "=", ":+", "+", "^", "^^", ",", ",,":
		out.Exp = &syntax.Expansion{Op: pe.Exp.Op, Word: x.word(pe.Exp.Word, quoted)}
	case "#", "##", "%", "%%":
		ws, ok := static(pe.Exp.Word)
		if !ok {
			return unknown(false)
		}
		out.Exp = &syntax.Expansion{Op: pe.Exp.Op, Word: ws[0]}
	case "/", "//":
		ws, ok := static(pe.Repl.Orig, pe.Repl.With)
		if !ok {
			return unknown(true)
		}
		out.Repl = &syntax.Replace{All: pe.Repl.All, Orig: ws[0], With: ws[1]}
	case "/#", "/%":
		// The expander has no anchored replacement.
		pat, ok1 := x.static(pe.Repl.Orig)
		rep, ok2 := x.static(pe.Repl.With)
		if !ok1 || !ok2 {
			return unknown(true)
		}
		for i, v := range vals {
			vals[i] = replaceAnchored(v, pat[1:], rep, op == "/#")
		}
		return x.values(vals...)
	case ":":
		off, ok1 := x.arithText(pe.Slice.Offset)
		n, ok2 := x.arithText(pe.Slice.Length)
		o, ok3 := x.w.arithValue(off, x.sc)
		l, ok4 := x.w.arithValue(n, x.sc)
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return unknown(true)
		}
		out.Slice = &syntax.Slice{Offset: litWord(strconv.FormatInt(o, 10))}
		if pe.Slice.Length != nil {
			out.Slice.Length = litWord(strconv.FormatInt(l, 10))
		}
	case "@":
		lit, _ := firstLit(pe.Exp.Word)
		res := make([]string, len(vals))
		for i, v := range vals {
			switch lit {
			case "P":
				return unknown(true)
			case "E":
				v = decodeANSIC(v)
			case "U":
				v = strings.ToUpper(v)
			case "L":
				v = strings.ToLower(v)
			}
			res[i] = v
		}
		return x.values(res...)
	case "!":
		// ${!name}: the value names another variable.
		if pe.Index != nil || pe.Names != 0 || pe.Exp != nil || len(vals) != 1 {
			return unknown(true)
		}
		v := vals[0]
		if !shellsyntax.IsName(v) && !(len(v) == 1 && strings.IndexByte("@*#?-$!0123456789", v[0]) >= 0) {
			return unknown(true)
		}
		return x.param(&syntax.ParamExp{Short: true, Param: &syntax.Lit{Value: v}}, quoted)
	default:
		return unknown(true)
	}
	return out
}

// replaceAnchored replaces pat (a shell pattern) at the start (or end)
// of v.
func replaceAnchored(v, pat, rep string, start bool) string {
	expr, err := pattern.Regexp(pat, 0)
	if err != nil || len(v) > 4096 {
		return v
	}
	if start {
		expr = "^(?:" + expr + ")"
	} else {
		expr = "(?:" + expr + ")$"
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return v
	}
	if loc := re.FindStringIndex(v); loc != nil {
		return v[:loc[0]] + rep + v[loc[1]:]
	}
	return v
}

// lookupVar returns what is known of a parameter: its values (elements,
// for an array) when known, else where the value comes from.
func (w *walker) lookupVar(name string, sc *scope) (variable, bool) {
	switch name {
	case "@", "*":
		if !sc.posKnown {
			return variable{isArr: true}, false
		}
		var elems []string
		for _, a := range sc.pos {
			if a.dyn {
				return variable{isArr: true, origins: a.origins}, false
			}
			elems = append(elems, a.v())
		}
		return variable{isArr: true, arr: elems}, true
	case "#":
		if sc.posKnown {
			return variable{vals: []string{strconv.Itoa(len(sc.pos))}}, true
		}
		return variable{}, false
	}
	if v, ok := fixedVars[name]; ok {
		return variable{vals: []string{v}}, true
	}
	if name == "0" || name[0] >= '1' && name[0] <= '9' {
		a, ok := positional(name, sc)
		switch {
		case name != "0" && !sc.posKnown:
			return variable{}, false
		case !ok:
			return variable{vals: []string{""}}, true // beyond the last
		case a.dyn:
			return variable{origins: a.origins}, false
		}
		return variable{vals: []string{a.v()}}, true
	}
	if v := w.vars[name]; v != nil {
		// An array's values are its elements, a scalar's its vals.
		if v.arr == nil && v.vals == nil {
			return variable{isArr: v.isArr, origins: v.origins}, false
		}
		return variable{vals: v.vals, arr: v.arr, isArr: v.isArr}, true
	}
	if v, ok := defaultVars[name]; ok {
		return variable{vals: []string{v}}, true
	}
	return variable{}, false
}

// fixedVars are the special parameters with a value of their own;
// defaultVars, the variables a script reads as these values until it
// sets them. PWD is the working directory: rm -rf "$PWD" is rm -rf . (a
// cd earlier moves it, as for any relative path).
var (
	fixedVars   = map[string]string{"$": fakePID, "!": fakePID, "PPID": fakePID, "BASHPID": fakePID, "?": "0", "-": "hB"}
	defaultVars = map[string]string{"IFS": " \t\n", "HOME": "~", "PWD": "."}
)

// envLike reports whether an unknown variable name looks like one from
// the environment (PATH, HOME, SHELL...): string surgery on such a value
// is how ${PATH:0:1} builds a "/" the text never shows.
func envLike(name string) bool {
	return name != "" && strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == ""
}

// positional returns positional parameter name ($0, $1...) of a scope.
func positional(name string, sc *scope) (arg, bool) {
	if name == "0" {
		return sc.pos0, true
	}
	n, err := strconv.Atoi(name)
	if err != nil || n < 1 || n > len(sc.pos) {
		return arg{}, false
	}
	return sc.pos[n-1], true
}

// mayRunCode reports whether text holds a substitution that bash would
// run if the text were evaluated again (arithmetic on a variable's value,
// an array subscript in a name given to printf -v, read, unset...).
func mayRunCode(s string) bool {
	return strings.Contains(s, "$(") || strings.Contains(s, "`") || strings.Contains(s, "<(") || strings.Contains(s, ">(")
}

// hasExtGlob reports whether a word holds an unquoted extended pattern
// (!(x), @(a|b)...), which the expander does not glob without a directory.
func hasExtGlob(word *syntax.Word) bool {
	return slices.ContainsFunc(word.Parts, func(p syntax.WordPart) bool {
		_, ok := p.(*syntax.ExtGlob)
		return ok
	})
}

// hasGlob reports whether s has a pathname pattern character: * or ?, or
// a [ with a ] after it.
func hasGlob(s string) bool {
	i := strings.IndexByte(s, '[')
	return strings.ContainsAny(s, "*?") || i >= 0 && strings.IndexByte(s[i+1:], ']') >= 0
}

// arithValue evaluates an arithmetic expression whose variables are
// known numbers, with mvdan.cc/sh's evaluator; an unknown variable, an
// assignment or an error leaves the value unknown. A variable's value that
// holds a substitution is checked as commands: bash evaluates it again.
func (w *walker) arithValue(expr string, sc *scope) (int64, bool) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return 0, true
	}
	if shellsyntax.DeepBrackets(expr, maxBrackets) >= 0 {
		return 0, false
	}
	x, err := shellsyntax.ParseArithm(expr)
	if err != nil || x == nil {
		return 0, false
	}
	env := map[string]string{} // the known variables; read-only, so an assignment is an error
	ok := true
	syntax.Walk(x, func(n syntax.Node) bool {
		word, isWord := n.(*syntax.Word)
		if !ok || !isWord {
			return ok
		}
		lit := word.Lit()
		switch {
		case lit == "":
			ok = false
		case syntax.ValidName(lit):
			v, known := w.lookupVar(lit, sc)
			for _, v := range v.vals {
				if mayRunCode(v) {
					w.walkScriptLenient(v, &scope{depth: sc.depth + 1})
				}
			}
			// A variable has a value here when it holds one number.
			val := ""
			if known && len(v.vals) == 1 {
				val = strings.TrimSpace(v.vals[0])
			}
			_, err := strconv.ParseInt(val, 0, 64)
			ok = err == nil
			env[lit] = val
		default:
			if _, err := strconv.ParseInt(lit, 0, 64); err != nil && !strings.Contains(lit, "#") {
				ok = false
			}
		}
		return false
	})
	if !ok {
		return 0, false
	}
	v, err := expand.Arithm(&expand.Config{Env: expand.FuncEnviron(func(name string) string { return env[name] })}, x)
	if err != nil {
		return 0, false
	}
	return int64(v), true
}
