package shellguard

import (
	"path"
	"strings"
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
	vars        map[string]*variable
	funcs       map[string]*command
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
	fds         map[string]*data  // descriptors exec opened for reading // base names of downloaded files
	links       map[string]string // symlinks this script made: link path → target
}

func newShWalker() *walker {
	w := &walker{work: maxWork}
	w.segs = w.segBuf[:0]
	return w
}

// sawCommand reports whether a command of that name ran.
func (w *walker) sawCommand(name string) bool {
	for _, s := range w.seen {
		if s == name {
			return true
		}
	}
	return false
}

func (w *walker) setFile(key string, d *data) {
	if w.files == nil {
		w.files = map[string]*data{}
	}
	w.files[key] = d
}

func (w *walker) failParse(rule, desc string) {
	if w.err == nil {
		w.err = parseErr(rule, desc, "")
	}
}

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
}

func (w *walker) finding(rule, desc, text string) {
	w.addSeg(&segment{kind: segFinding, rule: rule, desc: desc, text: text})
}

func (w *walker) detected(name string, origins originSet, text string) {
	w.addSeg(&segment{kind: segDetect, detect: name, origins: origins, text: text})
}

// walkScript parses src and walks it.
func (w *walker) walkScript(src string, sc *scope, stdin *data) *data {
	if sc.depth > maxDepth {
		w.failParse("too_deep", "commands are nested more than 8 levels deep")
		return nil
	}
	l, err := parse(src, sc.depth, &w.work)
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return nil
	}
	return w.walkList(l, sc, stdin, pipeCtx{}).out
}

// walkSub walks a substitution's body one level deeper and returns its
// output.
func (w *walker) walkSub(l *cmdList, sc *scope, stdin *data) *data {
	if l == nil || w.err != nil {
		return &data{origins: originOther}
	}
	inner := *sc
	inner.depth++
	if inner.depth > maxDepth {
		w.failParse("too_deep", "commands are nested more than 8 levels deep")
		return &data{}
	}
	out := w.walkList(l, &inner, stdin, pipeCtx{}).out
	if out == nil {
		out = &data{texts: []string{""}}
	}
	return out
}

func (w *walker) walkList(l *cmdList, sc *scope, stdin *data, pc pipeCtx) stageResult {
	var res stageResult
	if l == nil {
		return res
	}
	for i, ao := range l.items {
		if w.err != nil {
			return res
		}
		r := w.walkAndOr(ao, sc, stdin, pc)
		res.kinds |= r.kinds
		if len(l.items) == 1 {
			res.out = r.out
		} else {
			res.out = concatData(res.out, r.out, i == 0)
		}
	}
	return res
}

func (w *walker) walkAndOr(ao *andOr, sc *scope, stdin *data, pc pipeCtx) stageResult {
	var res stageResult
	ctx := pc
	if ao.bg {
		ctx.bg = true
	}
	for i, pl := range ao.pipes {
		r := w.walkPipeline(pl, sc, stdin, ctx)
		res.kinds |= r.kinds
		if len(ao.pipes) == 1 {
			res.out = r.out
		} else {
			res.out = concatData(res.out, r.out, i == 0)
		}
	}
	return res
}

func (w *walker) walkPipeline(pl *pipeline, sc *scope, stdin *data, pc pipeCtx) stageResult {
	ctx := pc
	if len(pl.cmds) > 1 {
		ctx.piped = true
	}
	in := stdin
	if in == nil {
		in = w.stdin
	}
	var res stageResult
	var prev kindSet
	for i, c := range pl.cmds {
		r := w.walkCommand(c, sc, in, ctx)
		if w.err != nil {
			return res
		}
		if i > 0 && prev&ksShell != 0 && r.kinds&ksSocket != 0 {
			w.detected("shell_to_socket", 0, "... | "+cmdText(c))
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
	for _, d := range []*data{a, b} {
		for _, t := range append(d.texts, d.partial...) {
			if len(out.partial) < 4 {
				out.partial = append(out.partial, t)
			}
		}
	}
	return out
}

// cmdText renders a command roughly, for detector messages.
func cmdText(c *command) string {
	if c == nil || len(c.words) == 0 {
		return "..."
	}
	var parts []string
	for _, word := range c.words {
		parts = append(parts, word.raw)
	}
	return strings.Join(parts, " ")
}

func (w *walker) walkCommand(c *command, sc *scope, stdin *data, pc pipeCtx) stageResult {
	if c == nil || !w.spend(1) {
		return stageResult{}
	}
	switch c.kind {
	case cmdSimple:
		return w.walkSimple(c, sc, stdin, pc)
	case cmdFunc:
		w.defineFunction(c, sc)
		return stageResult{out: &data{texts: []string{""}}}
	}
	// Compound commands: redirections apply to the whole body.
	redirs, in, procOuts := w.expandRedirs(c.redirs, sc, stdin)
	if len(redirs) > 0 {
		w.addSeg(&segment{kind: segAssign, redirs: redirs, text: redirText(redirs), cmdText: redirText(redirs), cwd: w.cwd})
	}
	if (c.kind == cmdLoop || c.kind == cmdFor) && len(c.lists) > 0 && startsBackground(c.lists[len(c.lists)-1], 0) && w.unbounded(c, sc) {
		w.detected("spawn_loop", 0, "loop { ... & }")
	}
	var res stageResult
	inner := sc
	switch c.kind {
	case cmdSubshell, cmdGroup:
		inner = &scope{pos: sc.pos, pos0: sc.pos0, posKnown: sc.posKnown, depth: sc.depth}
		res = w.walkList(c.lists[0], inner, in, pc)
	case cmdFor:
		if c.name != "" {
			var vals []string
			unknown := false
			var origins originSet
			if len(c.words) == 0 {
				unknown = true
			}
			for _, v := range w.expandWords(c.words, sc) {
				for _, a := range v {
					if a.dyn || a.glob {
						unknown = true
						origins |= a.origins
					}
					vals = append(vals, a.v())
				}
			}
			if unknown || len(vals) > maxVariants {
				w.setVar(c.name, nil, origins|originOther)
			} else {
				w.setVar(c.name, vals, 0)
			}
		} else {
			for _, wd := range c.words {
				w.expandArith(&part{kind: partArith, words: []*word{wd}}, sc)
			}
		}
		res = w.walkLists(c.lists, sc, in, pc)
	case cmdCase:
		for _, word := range c.words {
			w.expandWord(word, sc, true)
		}
		res = w.walkLists(c.lists, sc, in, pc)
	case cmdArith, cmdCond:
		if c.kind == cmdArith && len(c.lists) > 0 {
			// dash reads ((...)) as two nested subshells. Only the rules
			// judge that reading: in bash it is arithmetic.
			w.defWalk++
			w.walkList(c.lists[0], sc, in, pc)
			w.defWalk--
		}
		for _, wd := range c.words {
			if c.kind == cmdArith {
				w.expandArith(&part{kind: partArith, words: []*word{wd}}, sc)
			} else {
				w.expandWord(wd, sc, false)
			}
		}
		res.out = &data{texts: []string{""}}
	default:
		res = w.walkLists(c.lists, sc, in, pc)
	}
	w.writeRedirFiles(redirs, res.out)
	for _, po := range procOuts {
		w.walkSub(po, sc, res.out)
	}
	return res
}

func (w *walker) walkLists(ls []*cmdList, sc *scope, stdin *data, pc pipeCtx) stageResult {
	var res stageResult
	for i, l := range ls {
		r := w.walkList(l, sc, stdin, pc)
		res.kinds |= r.kinds
		res.out = concatData(res.out, r.out, i == 0)
	}
	if res.out != nil && len(ls) > 1 {
		res.out = &data{origins: res.out.origins | originOther}
	}
	return res
}

// defineFunction records a function and walks its body once as if it ran
// (with unknown arguments), so a body that is never called is still
// checked and its calls feed the fork-bomb detector.
func (w *walker) defineFunction(c *command, sc *scope) {
	name := strings.ToLower(c.name)
	if w.funcs == nil {
		w.funcs = map[string]*command{}
	}
	w.funcs[name] = c.fn
	if w.inCall == nil {
		w.inCall = map[string]bool{}
	}
	if w.inCall[name] {
		return
	}
	saved := w.curFunc
	w.curFunc = name
	w.inCall[name] = true
	// The arguments are unknown here; every call walks the body again
	// with its own, so what is only known at a call is judged there.
	inner := &scope{depth: sc.depth + 1, pos0: sc.pos0}
	if inner.depth > maxDepth {
		w.failParse("too_deep", "commands are nested more than 8 levels deep")
	} else {
		w.defWalk++
		w.walkCommand(c.fn, inner, nil, pipeCtx{})
		w.defWalk--
	}
	w.inCall[name] = false
	w.curFunc = saved
}

// callFunction walks a function's body again with the call's arguments.
func (w *walker) callFunction(name string, fn *command, args []arg, sc *scope, stdin *data, pc pipeCtx) stageResult {
	if w.inCall[name] {
		return stageResult{out: &data{origins: originOther}}
	}
	inner := &scope{pos: args, posKnown: true, pos0: sc.pos0, depth: sc.depth + 1}
	if inner.depth > maxDepth {
		w.failParse("too_deep", "commands are nested more than 8 levels deep")
		return stageResult{}
	}
	w.inCall[name] = true
	saved := w.curFunc
	w.curFunc = name
	res := w.walkCommand(fn, inner, stdin, pc)
	w.curFunc = saved
	w.inCall[name] = false
	return res
}

func (w *walker) setVar(name string, vals []string, origins originSet) {
	v := w.vars[name]
	if v == nil {
		if w.vars == nil {
			w.vars = map[string]*variable{}
		}
		w.vars[name] = &variable{vals: vals, origins: origins}
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
		dup := false
		for _, y := range v.vals {
			if x == y {
				dup = true
				break
			}
		}
		if !dup {
			v.vals = append(v.vals, x)
		}
	}
	if len(v.vals) > maxVariants {
		v.vals = nil
		v.origins |= originOther
	}
}

func (w *walker) setArray(name string, elems []string, known bool, origins originSet) {
	if w.vars == nil {
		w.vars = map[string]*variable{}
	}
	if !known {
		w.vars[name] = &variable{isArr: true, origins: origins | originOther}
		return
	}
	if v := w.vars[name]; v != nil && (v.vals != nil || v.arr != nil) && !v.isArr {
		// A scalar and an array under one name: give up on both.
		w.vars[name] = &variable{isArr: true, origins: originOther}
		return
	}
	w.vars[name] = &variable{isArr: true, arr: elems}
}

// expandAssigns expands NAME=value words, records the variables and returns
// them as the command's environment.
func (w *walker) expandAssigns(words []*word, sc *scope) []assign {
	var out []assign
	for _, wd := range words {
		first := wd.parts[0]
		eq := strings.IndexByte(first.text, '=')
		name := first.text[:eq]
		appendMode := strings.HasSuffix(name, "+")
		name = strings.TrimSuffix(name, "+")
		if i := strings.IndexByte(name, '['); i > 0 {
			name = name[:i]
		}
		rest := &word{parts: append([]part{{kind: partLit, text: first.text[eq+1:]}}, wd.parts[1:]...), raw: wd.raw}
		if len(rest.parts) > 1 && rest.parts[0].text == "" {
			rest.parts = rest.parts[1:]
		}
		// Arrays: NAME=( ... ).
		if len(rest.parts) == 1 && rest.parts[0].kind == partArray {
			var elems []string
			known := true
			var origins originSet
			for _, v := range w.expandWords(rest.parts[0].words, sc) {
				for _, a := range v {
					if a.dyn {
						known = false
						origins |= a.origins
					}
					elems = append(elems, a.v())
				}
				break
			}
			w.setArray(name, elems, known, origins)
			out = append(out, assign{name: name, value: strings.Join(elems, " ")})
			continue
		}
		alts := w.expandWord(rest, sc, true)
		var vals []string
		known := true
		var origins originSet
		for _, fields := range alts {
			val := ""
			for _, a := range fields {
				if a.susp {
					w.finding("obfuscated_expansion", "string operations on an unknown variable build text the command does not show", wd.raw)
				}
				if a.dyn {
					known = false
					origins |= a.origins
				}
				val += a.v()
			}
			if appendMode {
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
			if commandVars[name] || mayRunCode(v) {
				// Programs run the value, or bash may evaluate it again
				// (arithmetic, [[ -eq ]], subscripts): check it as commands.
				w.walkScriptLenient(v, &scope{depth: sc.depth + 1})
			}
		}
	}
	return out
}

// commandVars are variables whose value programs run as a command line
// later; an assignment to one is checked as a command.
var commandVars = map[string]bool{
	"PROMPT_COMMAND": true, "GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_EDITOR": true,
	"GIT_PAGER": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "SUDO_ASKPASS": true, "EDITOR": true,
	"VISUAL": true, "PAGER": true, "MANPAGER": true, "LESSOPEN": true, "LESSCLOSE": true,
	"BROWSER": true, "FZF_DEFAULT_COMMAND": true, "PS4": true, "PS1": true, "PS0": true,
}

// expandRedirs expands redirection targets. It returns them, the input
// they give the command (here-documents, files, process substitutions)
// and the >(...) bodies that read the command's output.
func (w *walker) expandRedirs(rs []*redir, sc *scope, stdin *data) ([]redirTarget, *data, []*cmdList) {
	if len(rs) == 0 {
		return nil, stdin, nil
	}
	in := stdin
	var out []redirTarget
	var procOuts []*cmdList
	for _, r := range rs {
		switch r.op {
		case "<<", "<<-":
			text := r.hereRaw
			var origins originSet
			if r.hereBody != nil {
				var b strings.Builder
				for _, alt := range w.expandParts(r.hereBody.parts, sc, true) {
					for _, p := range alt {
						if p.unres {
							b.WriteString(p.ph)
							origins |= p.origins
						} else {
							b.WriteString(p.text)
						}
					}
					break
				}
				text = b.String()
			}
			in = &data{texts: []string{text}, origins: origins}
			continue
		}
		alts := w.expandWord(r.target, sc, r.op == "<<<")
		if w.err != nil || len(alts) == 0 || len(alts[0]) == 0 {
			continue
		}
		a := alts[0][0]
		if r.op == "<<<" {
			var texts []string
			for _, fields := range alts {
				var parts []string
				for _, f := range fields {
					parts = append(parts, f.p)
				}
				texts = append(texts, strings.Join(parts, " ")+"\n")
			}
			in = &data{texts: texts, origins: a.origins}
			continue
		}
		if a.procOut != nil {
			procOuts = append(procOuts, a.procOut)
		}
		t := redirTarget{op: r.fd + r.op, target: a.e, glob: a.glob}
		switch r.op {
		case ">", ">>", ">|", "&>", "&>>", "<>":
			t.write = true
		case ">&":
			t.write = !isFD(a.e)
		case "<&":
			if isFD(a.e) {
				if d := w.fds[strings.TrimSuffix(a.e, "-")]; d != nil {
					in = d
				}
				continue
			}
		}
		if r.op == "<" || r.op == "<>" || (r.op == "<&" && !isFD(a.e)) {
			switch {
			case a.data != nil:
				in = a.data
			case isNetDevice(a.e):
				in = &data{origins: originSocket}
			default:
				if d := w.files[w.fileKey(a.e)]; d != nil {
					in = d
				} else {
					in = &data{origins: originOther}
				}
			}
		}
		out = append(out, t)
	}
	return out, in, procOuts
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isNetDevice(s string) bool {
	return strings.HasPrefix(s, "/dev/tcp/") || strings.HasPrefix(s, "/dev/udp/")
}

func redirText(rs []redirTarget) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, r.op+r.target)
	}
	return strings.Join(parts, " ")
}

// execRedirs records what exec's input redirections make the shell read.
func (w *walker) execRedirs(rs []*redir, in *data, sc *scope, exec bool) {
	for _, r := range rs {
		if r.op != "<" && r.op != "<>" && r.op != "<<" && r.op != "<<<" && r.op != "<<-" {
			continue
		}
		fd := r.fd
		if fd == "" || fd == "0" {
			if exec {
				w.stdin = in
			}
			continue
		}
		// exec 3< file: expand the target again for its data.
		var d *data
		if alts := w.expandWord(r.target, sc, false); len(alts) > 0 && len(alts[0]) > 0 {
			a := alts[0][0]
			switch {
			case a.data != nil:
				d = a.data
			case r.op == "<<<":
				d = &data{texts: []string{a.p + "\n"}, origins: a.origins}
			case isNetDevice(a.e):
				d = &data{origins: originSocket}
			default:
				d = w.files[w.fileKey(a.e)]
			}
		}
		if d != nil {
			if w.fds == nil {
				w.fds = map[string]*data{}
			}
			w.fds[fd] = d
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
		if r.write && r.target != "" && !isNetDevice(r.target) && !strings.HasPrefix(r.target, "/dev/") {
			if out == nil {
				out = &data{texts: []string{""}}
			}
			w.setFile(w.fileKey(r.target), out)
		}
	}
}

func (w *walker) walkSimple(c *command, sc *scope, stdin *data, pc pipeCtx) stageResult {
	assigns := w.expandAssigns(c.assigns, sc)
	redirs, in, procOuts := w.expandRedirs(c.redirs, sc, stdin)
	if w.err != nil {
		return stageResult{}
	}
	if len(c.words) == 0 {
		seg := &segment{kind: segAssign, assigns: assigns, redirs: redirs, cwd: w.cwd}
		seg.text = segText(nil, assigns, redirs)
		seg.cmdText = segText(nil, nil, redirs)
		w.addSeg(seg)
		out := &data{texts: []string{""}}
		w.writeRedirFiles(redirs, out)
		return stageResult{out: out}
	}
	variants := w.expandWords(c.words, sc)
	if len(variants) > 0 && len(variants[0]) == 1 && variants[0][0].e == "exec" {
		// exec with only redirections changes the shell's own descriptors
		// for every command after it.
		w.execRedirs(c.redirs, in, sc, true)
	} else {
		// cmd 3< FILE: the command may read descriptor 3 by /dev/fd/3.
		w.execRedirs(c.redirs, in, sc, false)
	}
	var res stageResult
	for i, args := range variants {
		if w.err != nil {
			break
		}
		seg := &segment{kind: segCmd, args: args, assigns: assigns, redirs: redirs}
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
	w.writeRedirFiles(redirs, res.out)
	for _, po := range procOuts {
		w.walkSub(po, sc, res.out)
	}
	return res
}

// v is the argument's value in the empty view, before normalisation.
func (a arg) v() string {
	if !a.dyn {
		return a.p
	}
	return a.e
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
	n := &segment{kind: segCmd, args: args, redirs: s.redirs}
	n.assigns = append(append([]assign{}, s.assigns...), assigns...)
	return n
}

// literalArgs makes arguments from known strings.
func literalArgs(ss []string) []arg {
	out := make([]arg, len(ss))
	for i, s := range ss {
		out[i] = arg{e: normalise(s), p: s}
	}
	return out
}
