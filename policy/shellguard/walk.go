package shellguard

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// This file walks a parsed script the way the shell would run it and
// collects every command that may run (a segment), at any depth: pipeline
// stages, list members, subshells, substitutions, function bodies, and
// the commands wrappers, shells, eval and interpreters run in turn. It
// tracks what the rules need to see through indirection: variables,
// function definitions, aliases, the working directory, files written and
// what flows through pipes.

type segKind uint8

const (
	segCmd     segKind = iota // a command with arguments
	segAssign                 // assignments or redirections without a command
	segCode                   // inline code of an interpreter (python -c...)
	segFinding                // a "parse" refusal found while walking
	segDetect                 // a structural detector hit (rules with detect:)
)

// segment is one command the analysis found, ready for the rules.
type segment struct {
	kind    segKind
	args    []arg
	argv    []string // empty view, normalised; argv[0] as written
	name    string   // base name of argv[0], lower case
	assigns []assign
	redirs  []redirTarget
	text    string // assignments, command, arguments, redirections: for messages
	cmdText string // command, arguments, redirections: for regex rules
	code    string
	rule    string // segFinding
	desc    string
	detect  string // segDetect
	origins originSet
	cwd     string // working directory when it ran ("" the tool's, "?" unknown)
	ops     *[]operand
	// unwrapped: a wrapper or shell whose command (or -c text) is known
	// and was walked as segments of its own (see Commands).
	unwrapped bool
	// filtered: its output goes straight into a filter that keeps the
	// variables it names and no others (env | grep ^GO; see namesFilter).
	filtered bool
}

type assign struct {
	name, value string
}

// redirTarget is a redirection with its target expanded.
type redirTarget struct {
	op     string
	target string
	glob   bool
	write  bool
}

// scope is what differs between a script and the scripts it runs: the
// positional parameters and the nesting depth.
type scope struct {
	pos      []arg
	pos0     arg
	posKnown bool
	depth    int
}

// deeper is the scope of text run one level down with the same
// positional parameters (eval, source, an alias).
func (sc *scope) deeper() *scope {
	inner := *sc
	inner.depth++
	return &inner
}

// stageResult is what one pipeline stage produced and what ran in it.
type stageResult struct {
	out   *data
	kinds kindSet
}

type kindSet uint8

const (
	ksShell  kindSet = 1 << iota // a shell or interpreter
	ksSocket                     // a raw socket tool
)

// pipeCtx is where a command sits.
type pipeCtx struct {
	piped bool // part of a pipeline of several commands
	bg    bool // run in the background
}

type walker struct {
	work        int
	err         *DeniedError
	segs        []*segment
	src         string // the text the nodes being walked were parsed from
	vars        map[string]*variable
	funcs       map[string]funcDef
	aliases     map[string]string
	pathCmds    map[string]string // copies and links of commands: path or base → command
	files       map[string]*data
	cwd         string                     // "" the tool's work dir, "?" unknown
	seen        []string                   // base names of every command run (for with:)
	calls       map[string]map[string]bool // caller → callee → spawned (piped or background)
	curFunc     string
	inCall      map[string]bool
	defWalk     int // inside the definition-time walk of a function body
	fetchedBase map[string]bool
	segBuf      [8]*segment
	stdin       *data             // the shell's standard input, once exec redirects it
	fds         map[string]*data  // descriptors exec opened for reading
	links       map[string]string // symlinks this script made: link path → target
	metadata    bool              // a metadata endpoint was found (reported once)
}

// funcDef is a function's body and the text it was parsed from.
type funcDef struct {
	body *syntax.Stmt
	src  string
}

func newShWalker() *walker {
	w := &walker{work: maxWork}
	w.segs = w.segBuf[:0]
	return w
}

// sawCommand reports whether a command of that name ran.
func (w *walker) sawCommand(name string) bool {
	return slices.Contains(w.seen, name)
}

func (w *walker) setFile(key string, d *data) {
	put(&w.files, key, d)
}

// put sets m[k], making the map on first use: most checks need none of
// the walker's maps.
func put[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}

// failParse refuses the text, unless it is refused already.
func (w *walker) failParse(rule, desc string) {
	w.err = cmp.Or(w.err, parseErr(rule, desc, ""))
}

func (w *walker) tooDeep() { w.failParse("too_deep", "commands are nested more than 8 levels deep") }

func (w *walker) spend(n int) bool {
	if w.err != nil {
		return false
	}
	w.work -= n
	if w.work < 0 {
		w.failParse("too_complex", "command text takes too much work to analyse")
		return false
	}
	return true
}

func (w *walker) addSeg(s *segment) {
	if len(w.segs) >= maxSegments {
		w.failParse("too_complex", "command text runs too many commands to analyse")
		return
	}
	w.segs = append(w.segs, s)
	switch s.kind {
	case segCmd, segAssign, segCode:
		w.checkMetadata(s.text)
	}
}

// checkMetadata reports text that names a cloud metadata endpoint by
// address (metadata.go), once per walk.
func (w *walker) checkMetadata(texts ...string) {
	if w.metadata {
		return
	}
	for _, t := range texts {
		if metadataRef(t) {
			w.metadata = true
			w.detected("metadata_address", 0, t)
			return
		}
	}
}

func (w *walker) finding(rule, desc, text string) {
	w.addSeg(&segment{kind: segFinding, rule: rule, desc: desc, text: text})
}

func (w *walker) detected(name string, origins originSet, text string) {
	w.addSeg(&segment{kind: segDetect, detect: name, origins: origins, text: text})
}

// text is the source text of a node of the script being walked.
func (w *walker) text(n syntax.Node) string { return w.between(n.Pos(), 0, n.End()) }

// walkScript parses src and walks it.
func (w *walker) walkScript(src string, sc *scope, stdin *data) *data {
	if sc.depth > maxDepth {
		w.tooDeep()
		return nil
	}
	f, err := parse(src, sc.depth, &w.work)
	if err != nil {
		w.err = cmp.Or(w.err, err) // the first refusal stands
		return nil
	}
	return w.walkFile(f, src, sc, stdin)
}

// walkFile walks a parsed script; src is the text it was parsed from.
func (w *walker) walkFile(f *syntax.File, src string, sc *scope, stdin *data) *data {
	saved := w.src
	w.src = src
	out := w.walkStmts(f.Stmts, sc, stdin, pipeCtx{}).out
	w.src = saved
	return out
}

// walkSub walks a substitution's body one level deeper and returns its
// output.
func (w *walker) walkSub(ss []*syntax.Stmt, sc *scope, stdin *data) *data {
	if w.err != nil {
		return &data{origins: originOther}
	}
	inner := sc.deeper()
	if inner.depth > maxDepth {
		w.tooDeep()
		return &data{}
	}
	if len(ss) == 1 && ss[0].Cmd == nil && len(ss[0].Redirs) == 1 && ss[0].Redirs[0].Op == syntax.RdrIn {
		// $(< FILE) is bash's cat FILE.
		_, in, _ := w.expandRedirs(ss[0].Redirs, inner, nil)
		if in != nil {
			return in
		}
	}
	out := w.walkStmts(ss, inner, stdin, pipeCtx{}).out
	if out == nil {
		out = &data{texts: []string{""}}
	}
	return out
}

// chain lists the statements s joins with | and |& (pipe) or with && and
// || (not pipe), left to right.
func chain(s *syntax.Stmt, pipe bool, out []*syntax.Stmt) []*syntax.Stmt {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && len(s.Redirs) == 0 {
		if isPipe := b.Op == syntax.Pipe || b.Op == syntax.PipeAll; isPipe == pipe {
			return chain(b.Y, pipe, chain(b.X, pipe, out))
		}
	}
	return append(out, s)
}

// walkStmts walks a list of and-or lists run one after the other.
func (w *walker) walkStmts(ss []*syntax.Stmt, sc *scope, stdin *data, pc pipeCtx) stageResult {
	var res stageResult
	for i, s := range ss {
		if w.err != nil {
			return res
		}
		ctx := pc
		ctx.bg = ctx.bg || s.Background
		var buf [4]*syntax.Stmt
		pipes := chain(s, false, buf[:0])
		var r stageResult
		for j, pl := range pipes {
			pr := w.walkPipeline(pl, sc, stdin, ctx)
			r.kinds |= pr.kinds
			r.out = concatData(r.out, pr.out, j == 0)
		}
		res.kinds |= r.kinds
		res.out = concatData(res.out, r.out, i == 0)
	}
	return res
}

func (w *walker) walkPipeline(pl *syntax.Stmt, sc *scope, stdin *data, pc pipeCtx) stageResult {
	var buf [4]*syntax.Stmt
	stages := chain(pl, true, buf[:0])
	ctx := pc
	ctx.piped = ctx.piped || len(stages) > 1
	in := cmp.Or(stdin, w.stdin) // what exec redirected, unless the pipeline has its own
	var res stageResult
	var prev kindSet
	prevSegs := -1 // where the previous stage's segments start
	for i, s := range stages {
		first := len(w.segs)
		r := w.walkStmt(s, sc, in, ctx)
		if w.err != nil {
			return res
		}
		if prevSegs >= 0 && first < len(w.segs) && namesFilter(w.segs[first]) {
			for _, seg := range w.segs[prevSegs:first] {
				seg.filtered = true
			}
		}
		prevSegs = first
		if i > 0 && prev&ksShell != 0 && r.kinds&ksSocket != 0 {
			w.detected("shell_to_socket", 0, "... | "+w.cmdText(s))
		}
		prev = r.kinds
		res.kinds |= r.kinds
		in = r.out
	}
	res.out = in
	return res
}

// concatData is the output of two commands run one after the other.
func concatData(a, b *data, first bool) *data {
	if first || a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := &data{origins: a.origins | b.origins}
	if a.known() && b.known() && len(a.texts)*len(b.texts) <= 4 {
		for _, x := range a.texts {
			for _, y := range b.texts {
				out.texts = append(out.texts, x+y)
			}
		}
		return out
	}
	// Keep what is known of each side: consumers that read line by line
	// (crontab) still see those lines.
	parts := slices.Concat(a.texts, a.partial, b.texts, b.partial)
	out.partial = parts[:min(len(parts), 4)]
	return out
}

// cmdText renders a command roughly, for detector messages.
func (w *walker) cmdText(s *syntax.Stmt) string {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return "..."
	}
	parts := make([]string, len(call.Args))
	for i, word := range call.Args {
		parts[i] = w.text(word)
	}
	return strings.Join(parts, " ")
}

// walkStmt walks one command of a pipeline with its redirections.
func (w *walker) walkStmt(s *syntax.Stmt, sc *scope, stdin *data, pc pipeCtx) stageResult {
	if !w.spend(2) {
		return stageResult{}
	}
	// A simple command's words (and assignments): declare, let and time
	// are read as the commands they also are.
	var words []*syntax.Word
	var assigns []*syntax.Assign
	switch x := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		for _, a := range x.Assigns {
			if a.Index != nil && strings.ContainsAny(w.text(a.Index), "$`") {
				// a[$(cmd)]=v: the subscript runs; read it as a word.
				words = append(words, w.assignWord(a, sc))
			} else {
				assigns = append(assigns, a)
			}
		}
		if words == nil {
			words = x.Args
		} else {
			words = append(words, x.Args...)
		}
	case *syntax.DeclClause:
		words = []*syntax.Word{{Parts: []syntax.WordPart{x.Variant}}}
		for _, a := range x.Args {
			words = append(words, w.assignWord(a, sc))
		}
	case *syntax.LetClause:
		words = []*syntax.Word{litWord("let")}
		for _, e := range x.Exprs {
			words = append(words, w.arithWord(e))
		}
	case *syntax.TimeClause:
		// time is read as the wrapper it also is as a program.
		words = []*syntax.Word{litWord("time")}
		if x.PosixFormat {
			words = append(words, litWord("-p"))
		}
		if x.Stmt != nil {
			call, ok := x.Stmt.Cmd.(*syntax.CallExpr)
			if !ok || len(call.Assigns) > 0 || len(x.Stmt.Redirs) > 0 {
				return w.walkCompound(s, []*syntax.Stmt{x.Stmt}, sc, stdin, pc)
			}
			words = append(words, call.Args...)
		}
	case *syntax.CoprocClause:
		return w.walkCompound(s, []*syntax.Stmt{x.Stmt}, sc, stdin, pc)
	case *syntax.FuncDecl:
		w.defineFunction(x, sc)
		return stageResult{out: &data{texts: []string{""}}}
	case *syntax.Subshell:
		return w.walkCompound(s, x.Stmts, sc, stdin, pc)
	case *syntax.Block:
		return w.walkCompound(s, x.Stmts, sc, stdin, pc)
	case *syntax.BinaryCmd:
		// && or | under redirections: {a && b; } > f reads the same.
		return w.walkCompound(s, []*syntax.Stmt{{Cmd: x, Position: x.Pos()}}, sc, stdin, pc)
	default:
		return w.walkCompound(s, nil, sc, stdin, pc)
	}
	return w.walkSimple(assigns, words, s.Redirs, sc, stdin, pc)
}

// walkCompound walks a compound command; body is the list a subshell or
// group runs. Its redirections apply to the whole body.
func (w *walker) walkCompound(s *syntax.Stmt, body []*syntax.Stmt, sc *scope, stdin *data, pc pipeCtx) stageResult {
	redirs, in, procOuts := w.expandRedirs(s.Redirs, sc, stdin)
	if len(redirs) > 0 {
		w.addSeg(w.assignSeg(nil, redirs))
	}
	if w.spawnLoop(s, sc) {
		w.detected("spawn_loop", 0, "loop { ... & }")
	}
	var res stageResult
	switch x := s.Cmd.(type) {
	case *syntax.IfClause:
		var lists [][]*syntax.Stmt
		for cl := x; cl != nil; cl = cl.Else {
			if cl.ThenPos.IsValid() {
				lists = append(lists, cl.Cond)
			}
			lists = append(lists, cl.Then)
		}
		res = w.walkLists(lists, sc, in, pc)
	case *syntax.WhileClause:
		res = w.walkLists([][]*syntax.Stmt{x.Cond, x.Do}, sc, in, pc)
	case *syntax.ForClause:
		switch lp := x.Loop.(type) {
		case *syntax.WordIter:
			// A pattern (for d in /dev/sd*) stays a pattern: the variable
			// takes whatever it matches.
			vals, known, glob, origins := w.wordValues(lp.Items, sc, true)
			if !known || len(lp.Items) == 0 || len(vals) > maxVariants {
				w.setVar(lp.Name.Value, nil, origins|originOther)
			} else {
				w.setVar(lp.Name.Value, vals, 0)
				if v := w.vars[lp.Name.Value]; glob && v != nil && v.vals != nil {
					v.glob = true
				}
			}
		case *syntax.CStyleLoop:
			for _, e := range []syntax.ArithmExpr{lp.Init, lp.Cond, lp.Post} {
				w.arithSubs(e, sc) // (an empty part is 0)
			}
		}
		res = w.walkStmts(x.Do, sc, in, pc)
	case *syntax.CaseClause:
		w.expandWord(x.Word, sc, true)
		lists := make([][]*syntax.Stmt, 0, len(x.Items))
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				w.expandWord(p, sc, true)
			}
			lists = append(lists, it.Stmts)
		}
		res = w.walkLists(lists, sc, in, pc)
	case *syntax.ArithmCmd:
		// bash reads ((...)) as arithmetic, dash as two nested subshells:
		// only the rules judge the second reading.
		inner := w.between(x.Left, 2, x.Right)
		f, err := parseLenient(inner, sc.depth+1, &w.work)
		if err != nil {
			w.err = err
			return res
		}
		if f != nil {
			w.defWalk++
			w.walkFile(f, inner, sc, in)
			w.defWalk--
		}
		w.arithSubs(x.X, sc)
		res.out = &data{texts: []string{""}}
	case *syntax.TestClause:
		// The words of [[ ]] are expanded for what they run.
		syntax.Walk(x.X, func(n syntax.Node) bool {
			word, ok := n.(*syntax.Word)
			if ok {
				w.expandWord(word, sc, false)
			}
			return !ok
		})
		res.out = &data{texts: []string{""}}
	default:
		inner := *sc
		res = w.walkStmts(body, &inner, in, pc)
	}
	return w.redirected(res, redirs, procOuts, sc)
}

// redirected writes a stage's output to the files it redirects to and
// runs the bodies of its >(...) targets with it as their input.
func (w *walker) redirected(res stageResult, redirs []redirTarget, procOuts [][]*syntax.Stmt, sc *scope) stageResult {
	w.writeRedirFiles(redirs, res.out)
	for _, po := range procOuts {
		w.walkSub(po, sc, res.out)
	}
	return res
}

// walkLists walks a compound command's lists one after the other; when
// they are several (branches, a loop's condition and body), only where
// their output comes from is known.
func (w *walker) walkLists(ls [][]*syntax.Stmt, sc *scope, stdin *data, pc pipeCtx) stageResult {
	res := w.walkStmts(slices.Concat(ls...), sc, stdin, pc)
	if res.out != nil && len(ls) > 1 {
		res.out = &data{origins: res.out.origins | originOther}
	}
	return res
}

// defineFunction records a function and walks its body once as if it ran
// (with unknown arguments), so a body that is never called is still
// checked and its calls feed the fork-bomb detector.
func (w *walker) defineFunction(fd *syntax.FuncDecl, sc *scope) {
	name := strings.ToLower(fd.Name.Value)
	fn := funcDef{body: fd.Body, src: w.src}
	put(&w.funcs, name, fn)
	// The arguments are unknown here; every call walks the body again
	// with its own, so what is only known at a call is judged there.
	w.defWalk++
	w.callFunction(name, fn, &scope{depth: sc.depth + 1, pos0: sc.pos0}, nil, pipeCtx{})
	w.defWalk--
}

// callFunction walks a function's body in scope inner (the call's
// arguments), unless the function is running already.
func (w *walker) callFunction(name string, fn funcDef, inner *scope, stdin *data, pc pipeCtx) stageResult {
	if w.inCall[name] {
		return stageResult{out: &data{origins: originOther}}
	}
	if inner.depth > maxDepth {
		w.tooDeep()
		return stageResult{}
	}
	put(&w.inCall, name, true)
	saved, savedSrc := w.curFunc, w.src
	w.curFunc, w.src = name, fn.src
	res := w.walkStmt(fn.body, inner, stdin, pc)
	w.curFunc, w.src = saved, savedSrc
	w.inCall[name] = false
	return res
}

// between is the source text from skip bytes after a to b.
func (w *walker) between(a syntax.Pos, skip int, b syntax.Pos) string {
	i, j := int(a.Offset())+skip, int(b.Offset())
	if !a.IsValid() || !b.IsValid() || i > j || j > len(w.src) {
		return ""
	}
	return w.src[i:j]
}

func litWord(s string) *syntax.Word {
	return &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: s}}}
}

// assignWord writes NAME=value (or a declare operand) as one word.
func (w *walker) assignWord(a *syntax.Assign, sc *scope) *syntax.Word {
	if a.Name == nil {
		if a.Value == nil {
			return litWord("")
		}
		return a.Value
	}
	out := &syntax.Word{}
	prefix := a.Name.Value
	if a.Index != nil {
		if idx := w.text(a.Index); strings.ContainsAny(idx, "$`") {
			out.Parts = append(out.Parts, &syntax.Lit{Value: prefix + "["})
			out.Parts = append(out.Parts, w.arithWord(a.Index).Parts...)
			prefix = "]"
		} else {
			prefix += "[" + idx + "]"
		}
	}
	if a.Append {
		prefix += "+"
	}
	if !a.Naked {
		prefix += "="
	}
	out.Parts = append(out.Parts, &syntax.Lit{Value: prefix})
	switch {
	case a.Array != nil:
		var elems []string
		for _, el := range a.Array.Elems {
			if el.Value == nil {
				continue
			}
			if alts := w.expandWord(el.Value, sc, false); len(alts) > 0 {
				for _, a := range alts[0] {
					elems = append(elems, a.p)
				}
			}
		}
		out.Parts = append(out.Parts, &syntax.SglQuoted{Value: "(" + strings.Join(elems, " ") + ")"})
	case a.Value != nil:
		out.Parts = append(out.Parts, a.Value.Parts...)
	}
	return out
}

// arithWord reads an arithmetic expression as a word of quoted text with
// the expansions inside it.
func (w *walker) arithWord(e syntax.ArithmExpr) *syntax.Word {
	if word, ok := e.(*syntax.Word); ok {
		return word
	}
	out := &syntax.Word{}
	last := int(e.Pos().Offset())
	lit := func(to int) {
		if to > last && to <= len(w.src) {
			out.Parts = append(out.Parts, &syntax.SglQuoted{Value: w.src[last:to]})
		}
	}
	syntax.Walk(e, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp:
			lit(int(n.Pos().Offset()))
			out.Parts = append(out.Parts, n.(syntax.WordPart))
			last = int(n.End().Offset())
			return false
		}
		return true
	})
	lit(int(e.End().Offset()))
	return out
}

// expandAssigns expands NAME=value assignments, records the variables and
// returns them as the command's environment.
func (w *walker) expandAssigns(as []*syntax.Assign, sc *scope) []assign {
	var out []assign
	for _, a := range as {
		if a.Name == nil {
			continue
		}
		name := a.Name.Value
		// Arrays: NAME=( ... ).
		if a.Array != nil {
			var words []*syntax.Word
			for _, el := range a.Array.Elems {
				if el.Value != nil {
					words = append(words, el.Value)
				}
			}
			elems, known, _, origins := w.wordValues(words, sc, false)
			w.setArray(name, elems, known, origins)
			out = append(out, assign{name: name, value: strings.Join(elems, " ")})
			continue
		}
		alts := [][]arg{nil}
		if a.Value != nil {
			alts = w.expandWord(a.Value, sc, true)
		}
		var vals []string
		known := true
		var origins originSet
		for _, fields := range alts {
			val := ""
			for _, f := range fields {
				if f.susp {
					w.finding("obfuscated_expansion", "string operations on an unknown variable build text the command does not show", w.text(a))
				}
				if f.dyn {
					known = false
					origins |= f.origins
				}
				val += f.v()
			}
			if a.Append {
				if old := w.vars[name]; old != nil && len(old.vals) == 1 {
					val = old.vals[0] + val
				} else if old != nil {
					known = false
				}
			}
			vals = append(vals, val)
		}
		if known {
			w.setVar(name, vals, 0)
		} else {
			w.setVar(name, nil, origins)
		}
		value := ""
		if len(vals) > 0 {
			value = vals[0]
		}
		out = append(out, assign{name: name, value: normalise(value)})
		for _, v := range vals {
			w.runEnv(name, v, sc)
		}
	}
	return out
}

// wordValues expands words to their values in the empty view, of every
// variant (all) or of the first: known is false when one is only known
// when the command runs (origins: from where), glob when one is a pattern.
func (w *walker) wordValues(words []*syntax.Word, sc *scope, all bool) (vals []string, known, glob bool, origins originSet) {
	known = true
	for _, v := range w.expandWords(words, sc) {
		for _, a := range v {
			if a.dyn {
				known = false
				origins |= a.origins
			}
			glob = glob || a.glob
			vals = append(vals, a.v())
		}
		if !all {
			break
		}
	}
	return vals, known, glob, origins
}

func (w *walker) setVar(name string, vals []string, origins originSet) {
	v := w.vars[name]
	if v == nil {
		put(&w.vars, name, &variable{vals: vals, origins: origins})
		return
	}
	if v.isArr {
		*v = variable{vals: vals, origins: origins | v.origins}
		return
	}
	if vals == nil || v.vals == nil {
		v.vals = nil
		v.origins |= origins | originOther
		return
	}
	for _, x := range vals {
		if !slices.Contains(v.vals, x) {
			v.vals = append(v.vals, x)
		}
	}
	if len(v.vals) > maxVariants {
		v.vals = nil
		v.origins |= originOther
	}
}

func (w *walker) setArray(name string, elems []string, known bool, origins originSet) {
	v := &variable{isArr: true}
	switch old := w.vars[name]; {
	case !known:
		v.origins = origins | originOther
	case old != nil && (old.vals != nil || old.arr != nil) && !old.isArr:
		// A scalar and an array under one name: give up on both.
		v.origins = originOther
	default:
		v.arr = elems
	}
	put(&w.vars, name, v)
}

// runEnv checks the value of variable name as the commands it runs: a
// program runs it (shellsyntax.EnvRuns: GIT_SSH_COMMAND, PAGER, an
// exported function...), or bash may evaluate it again (arithmetic,
// [[ -eq ]], subscripts, prompts).
func (w *walker) runEnv(name, value string, sc *scope) {
	if shellsyntax.EnvRuns(name) || mayRunCode(value) {
		w.walkScriptLenient(shellsyntax.EnvCommand(name, value), &scope{depth: sc.depth + 1})
	}
}

// expandRedirs expands redirection targets. It returns them, the input
// they give the command (here-documents, files, process substitutions)
// and the >(...) bodies that read the command's output.
func (w *walker) expandRedirs(rs []*syntax.Redirect, sc *scope, stdin *data) ([]redirTarget, *data, [][]*syntax.Stmt) {
	in := stdin
	var out []redirTarget
	var procOuts [][]*syntax.Stmt
	for _, r := range rs {
		if !w.spend(2) {
			return nil, in, nil
		}
		if r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc {
			in = w.hereDoc(r, sc)
			continue
		}
		alts := w.expandWord(r.Word, sc, r.Op == syntax.WordHdoc)
		if w.err != nil || len(alts) == 0 || len(alts[0]) == 0 {
			continue
		}
		a := alts[0][0]
		if r.Op == syntax.WordHdoc {
			var texts []string
			for _, fields := range alts {
				texts = append(texts, firstP(fields)+"\n")
			}
			in = &data{texts: texts, origins: a.origins}
			continue
		}
		if a.procOut != nil {
			procOuts = append(procOuts, a.procOut)
		}
		fd := ""
		if r.N != nil {
			fd = r.N.Value
		}
		t := redirTarget{op: fd + r.Op.String(), target: a.e, glob: a.glob}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
			t.write = true
		case syntax.DplOut:
			t.write = !isFD(a.e)
		case syntax.DplIn:
			if isFD(a.e) {
				if d := w.fds[strings.TrimSuffix(a.e, "-")]; d != nil {
					in = d
				}
				continue
			}
		}
		if r.Op == syntax.RdrIn || r.Op == syntax.RdrInOut || r.Op == syntax.DplIn {
			switch in = w.readPath(a); {
			case in != nil:
			case noData(a.e):
				in = &data{texts: []string{""}}
			default:
				in = &data{origins: originOther, file: true}
			}
		}
		out = append(out, t)
	}
	return out, in, procOuts
}

// readPath is what reading the path an argument names gives, when it is
// known: a process substitution's output, a socket, or a file the script
// wrote.
func (w *walker) readPath(a arg) *data {
	switch {
	case a.data != nil:
		return a.data
	case isNetDevice(a.e):
		return &data{origins: originSocket}
	}
	return w.files[w.fileKey(a.e)]
}

// noData are devices whose contents carry nothing of the machine's.
func noData(p string) bool {
	return slices.Contains([]string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/full"}, p)
}

// hereDoc is what a here-document gives the command: its body, expanded
// unless the delimiter is quoted, with what is unknown as written.
func (w *walker) hereDoc(r *syntax.Redirect, sc *scope) *data {
	if r.Hdoc == nil {
		return &data{texts: []string{""}}
	}
	strip := r.Op == syntax.DashHdoc
	raw := w.text(r.Hdoc)
	// The body as written, without the terminator line's indentation.
	if i := strings.LastIndexByte(raw, '\n'); i >= 0 {
		raw = raw[:i+1]
	} else if raw != "" {
		raw += "\n"
	}
	if strip {
		raw = stripTabsAfterNewlines(raw, true)
	}
	quoted := slices.ContainsFunc(r.Word.Parts, func(p syntax.WordPart) bool {
		lit, ok := p.(*syntax.Lit)
		return !ok || strings.ContainsRune(lit.Value, '\\')
	})
	if quoted || !strings.ContainsAny(raw, "$`\\") {
		return &data{texts: []string{raw}}
	}
	body := &syntax.Word{Parts: slices.Clone(r.Hdoc.Parts)}
	for i, p := range body.Parts {
		if lit, ok := p.(*syntax.Lit); ok && strip {
			body.Parts[i] = &syntax.Lit{Value: stripTabsAfterNewlines(lit.Value, lit.ValuePos.Col() == 1)}
		}
	}
	text, origins := w.expandDocument(body, sc)
	return &data{texts: []string{text}, origins: origins}
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
	return b.String()
}

// isFD reports a descriptor, as >&N, <&N- and >&- name one.
func isFD(s string) bool {
	n := strings.TrimSuffix(s, "-")
	return s == "-" || n != "" && strings.Trim(n, "0123456789") == ""
}

func isNetDevice(s string) bool {
	return strings.HasPrefix(s, "/dev/tcp/") || strings.HasPrefix(s, "/dev/udp/")
}

// execRedirs records what exec's input redirections make the shell read.
func (w *walker) execRedirs(rs []*syntax.Redirect, in *data, sc *scope, exec bool) {
	for _, r := range rs {
		if !slices.Contains([]syntax.RedirOperator{syntax.RdrIn, syntax.RdrInOut, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc}, r.Op) {
			continue
		}
		if r.N == nil || r.N.Value == "0" {
			if exec {
				w.stdin = in
			}
			continue
		}
		// exec 3< file: expand the target again for its data.
		var d *data
		if alts := w.expandWord(r.Word, sc, false); len(alts) > 0 && len(alts[0]) > 0 {
			a := alts[0][0]
			if d = w.readPath(a); r.Op == syntax.WordHdoc && a.data == nil {
				d = &data{texts: []string{a.p + "\n"}, origins: a.origins}
			}
		}
		if d != nil {
			put(&w.fds, r.N.Value, d)
		}
	}
}

// fileKey is the name under which a written file is remembered.
func (w *walker) fileKey(p string) string {
	if p == "" {
		return ""
	}
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") && w.cwd != "" && w.cwd != "?" {
		p = w.cwd + "/" + p
	}
	return path.Clean(p)
}

func (w *walker) writeRedirFiles(rs []redirTarget, out *data) {
	for _, r := range rs {
		if r.write && r.target != "" && !strings.HasPrefix(r.target, "/dev/") { // not /dev/null, /dev/tcp/...
			if out == nil {
				out = &data{texts: []string{""}}
			}
			w.setFile(w.fileKey(r.target), out)
		}
	}
}

func (w *walker) walkSimple(assigns []*syntax.Assign, words []*syntax.Word, rs []*syntax.Redirect, sc *scope, stdin *data, pc pipeCtx) stageResult {
	as := w.expandAssigns(assigns, sc)
	redirs, in, procOuts := w.expandRedirs(rs, sc, stdin)
	if w.err != nil {
		return stageResult{}
	}
	if len(words) == 0 {
		// Only assignments and redirections: nothing runs but the
		// substitutions they hold, a >(...) target's body among them.
		w.addSeg(w.assignSeg(as, redirs))
		return w.redirected(stageResult{out: &data{texts: []string{""}}}, redirs, procOuts, sc)
	}
	variants := w.expandWords(words, sc)
	// exec with only redirections changes the shell's own descriptors for
	// every command after it; cmd 3< FILE may read descriptor 3 by
	// /dev/fd/3.
	w.execRedirs(rs, in, sc, len(variants) > 0 && len(variants[0]) == 1 && variants[0][0].e == "exec")
	var res stageResult
	for i, args := range variants {
		if w.err != nil {
			break
		}
		seg := &segment{kind: segCmd, args: args, assigns: as, redirs: redirs}
		r := w.runCommand(seg, sc, in, pc)
		res.kinds |= r.kinds
		if i == 0 {
			res.out = r.out
		} else if res.out != nil && r.out != nil {
			merged := &data{origins: res.out.origins | r.out.origins}
			if res.out.known() && r.out.known() && len(res.out.texts)+len(r.out.texts) <= 4 {
				merged.texts = append(append([]string{}, res.out.texts...), r.out.texts...)
			}
			res.out = merged
		}
		for _, a := range args {
			if a.procOut != nil {
				w.walkSub(a.procOut, sc, r.out)
			}
		}
	}
	return w.redirected(res, redirs, procOuts, sc)
}

// v is the argument's value in the empty view, before normalisation.
func (a arg) v() string {
	if !a.dyn {
		return a.p
	}
	return a.e
}

// assignSeg is a segment of assignments or redirections without a command.
func (w *walker) assignSeg(assigns []assign, redirs []redirTarget) *segment {
	return &segment{kind: segAssign, assigns: assigns, redirs: redirs, cwd: w.cwd,
		text: segText(nil, assigns, redirs), cmdText: segText(nil, nil, redirs)}
}

// segText renders a segment for regular expressions and messages.
func segText(argv []string, assigns []assign, redirs []redirTarget) string {
	n := 0
	for _, as := range assigns {
		n += len(as.name) + len(as.value) + 2
	}
	for _, a := range argv {
		n += len(a) + 1
	}
	for _, r := range redirs {
		n += len(r.op) + len(r.target) + 1
	}
	b := make([]byte, 0, n)
	for _, as := range assigns {
		b = append(b, as.name...)
		b = append(b, '=')
		b = append(b, as.value...)
		b = append(b, ' ')
	}
	for i, a := range argv {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, a...)
	}
	for _, r := range redirs {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, r.op...)
		b = append(b, r.target...)
	}
	return string(b)
}

// finish computes the views the rules use.
func (s *segment) finish() {
	if s.argv == nil {
		s.argv = make([]string, 0, len(s.args))
	}
	s.argv = s.argv[:0]
	for _, a := range s.args {
		if !a.drop {
			s.argv = append(s.argv, a.e)
		}
	}
	s.name = ""
	if len(s.argv) > 0 {
		s.name = baseName(s.argv[0])
	}
	s.cmdText = segText(s.argv, nil, s.redirs)
	s.text = s.cmdText
	if len(s.assigns) > 0 {
		s.text = segText(s.argv, s.assigns, s.redirs)
	}
}

// baseName is the lower-cased last path component of a command name.
func baseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// derive makes the segment of a command another one runs.
func (s *segment) derive(args []arg, assigns []assign) *segment {
	return &segment{kind: segCmd, args: args, redirs: s.redirs, assigns: slices.Concat(s.assigns, assigns)}
}

// literalArgs makes arguments from known strings.
func literalArgs(ss []string) []arg {
	out := make([]arg, len(ss))
	for i, s := range ss {
		out[i] = arg{e: normalise(s), p: s}
	}
	return out
}
