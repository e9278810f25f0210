package shellguard

import (
	"regexp"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
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
}

// arg is one argument after expansion.
type arg struct {
	e, p    string    // empty view (normalised for matching) and placeholder view (raw)
	drop    bool      // disappears in the empty view: an unquoted unknown alone
	dyn     bool      // contains something unknown
	glob    bool      // contains an unquoted pathname pattern
	susp    bool      // built with string surgery on an unknown value
	dynBase bool      // the last path component holds something unknown
	origins originSet // sources of the unknown parts
	data    *data     // process substitution <(...): what reading it gives
	procOut *cmdList  // process substitution >(...): what reads it
}

// piece is one expanded part of a word before fields are formed.
type piece struct {
	text    string
	ph      string
	quoted  bool
	split   bool // unquoted expansion result: field splitting and globbing apply
	unres   bool
	brk     bool // field break between elements of "$@"
	susp    bool
	origins originSet
	data    *data
	procOut *cmdList
}

const fakePID = "99999"

// expandWords expands the words of a command into the argument lists it
// may run with (more than one when variables have several values).
func (w *walker) expandWords(words []*word, sc *scope) [][]arg {
	variants := [][]arg{make([]arg, 0, len(words))}
	for _, word := range words {
		// Fast path: one plain literal.
		if len(word.parts) == 1 && word.parts[0].kind == partLit {
			pt := word.parts[0]
			if pt.quoted || !strings.ContainsAny(pt.text, "{*?[~") {
				if !w.spend(1) {
					return nil
				}
				a := arg{e: normalise(pt.text), p: pt.text}
				for i := range variants {
					variants[i] = append(variants[i], a)
				}
				continue
			}
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
				nv := make([]arg, 0, len(v)+len(a))
				nv = append(nv, v...)
				nv = append(nv, a...)
				next = append(next, nv)
			}
		}
		variants = next
	}
	return variants
}

// expandWord expands one word into alternatives, each a list of fields.
// In an assignment there is no brace expansion and no field splitting.
func (w *walker) expandWord(word *word, sc *scope, assign bool) [][]arg {
	if !w.spend(1) {
		return nil
	}
	// Fast path: one plain literal.
	if len(word.parts) == 1 && word.parts[0].kind == partLit {
		pt := word.parts[0]
		if pt.quoted || assign || !strings.ContainsAny(pt.text, "{*?[~") {
			return [][]arg{{{e: normalise(pt.text), p: pt.text}}}
		}
	}
	partLists := [][]part{word.parts}
	if !assign {
		partLists = w.braceExpand(word.parts)
		if w.err != nil {
			return nil
		}
	}
	// Each brace-expanded word is an argument of its own; the alternatives
	// (variables with several values) of each combine.
	combined := [][]arg{nil}
	for _, parts := range partLists {
		alts := w.expandParts(parts, sc, assign)
		if w.err != nil {
			return nil
		}
		if len(alts) == 1 {
			f := fieldsOf(alts[0], assign)
			for i := range combined {
				combined[i] = append(combined[i], f...)
			}
			continue
		}
		if len(combined)*len(alts) > maxVariants {
			w.failParse("too_complex", "variables take too many combinations of values")
			return nil
		}
		next := make([][]arg, 0, len(combined)*len(alts))
		for _, c := range combined {
			for _, a := range alts {
				n := append(append([]arg{}, c...), fieldsOf(a, assign)...)
				next = append(next, n)
			}
		}
		combined = next
	}
	return combined
}

// expandParts evaluates parts into alternative piece lists.
func (w *walker) expandParts(parts []part, sc *scope, assign bool) [][]piece {
	alts := [][]piece{nil}
	for i := range parts {
		pt := &parts[i]
		var choices [][]piece
		switch pt.kind {
		case partLit:
			choices = w.expandLit(pt, i == 0, assign)
		case partParam:
			choices = w.expandParam(pt, sc)
		case partCmdSub:
			choices = w.expandCmdSub(pt, sc)
		case partArith:
			choices = [][]piece{{w.expandArith(pt, sc)}}
		case partProcIn:
			data := w.walkSub(pt.sub, sc, nil)
			choices = [][]piece{{{text: "/dev/fd/63", quoted: true, data: data}}}
		case partProcOut:
			choices = [][]piece{{{text: "/dev/fd/62", quoted: true, procOut: pt.sub}}}
		case partArray:
			var elems []string
			for _, ew := range pt.words {
				for _, f := range w.expandWord(ew, sc, false) {
					for _, a := range f {
						elems = append(elems, a.p)
					}
					break
				}
			}
			choices = [][]piece{{{text: "(" + strings.Join(elems, " ") + ")", quoted: true}}}
		case partGlob:
			choices = [][]piece{{{text: pt.text}}}
		}
		if w.err != nil {
			return nil
		}
		if len(choices) == 1 {
			for j := range alts {
				alts[j] = append(alts[j], choices[0]...)
			}
			continue
		}
		if len(alts)*len(choices) > maxVariants {
			w.failParse("too_complex", "variables take too many combinations of values")
			return nil
		}
		next := make([][]piece, 0, len(alts)*len(choices))
		for _, a := range alts {
			for _, c := range choices {
				n := make([]piece, 0, len(a)+len(c))
				n = append(n, a...)
				n = append(n, c...)
				next = append(next, n)
			}
		}
		alts = next
	}
	return alts
}

func (w *walker) expandLit(pt *part, first, assign bool) [][]piece {
	if pt.quoted || !first || !strings.HasPrefix(pt.text, "~") {
		return [][]piece{{{text: pt.text, quoted: pt.quoted}}}
	}
	// Tilde: ~ stands for the home directory in the rules. A script that
	// sets HOME moves it.
	rest := pt.text[1:]
	if rest != "" && rest[0] != '/' {
		return [][]piece{{{text: pt.text}}}
	}
	v := w.vars["HOME"]
	if v == nil || v.vals == nil {
		return [][]piece{{{text: pt.text}}}
	}
	var out [][]piece
	for _, h := range v.vals {
		out = append(out, []piece{{text: h, quoted: true}, {text: rest}})
	}
	return out
}

// lookupVar returns what is known of a parameter.
func (w *walker) lookupVar(name string, sc *scope) (vals []string, arr []string, isArr bool, origins originSet, known bool) {
	switch name {
	case "@", "*":
		if sc.posKnown {
			var elems []string
			for _, a := range sc.pos {
				if a.dyn {
					return nil, nil, true, a.origins, false
				}
				elems = append(elems, a.v())
			}
			return nil, elems, true, 0, true
		}
		return nil, nil, true, 0, false
	case "#":
		if sc.posKnown {
			return []string{strconv.Itoa(len(sc.pos))}, nil, false, 0, true
		}
		return nil, nil, false, 0, false
	case "0":
		if sc.pos0.dyn {
			return nil, nil, false, sc.pos0.origins, false
		}
		return []string{sc.pos0.v()}, nil, false, 0, true
	case "$", "!", "PPID", "BASHPID":
		return []string{fakePID}, nil, false, 0, true
	case "?":
		return []string{"0"}, nil, false, 0, true
	case "-":
		return []string{"hB"}, nil, false, 0, true
	}
	if name[0] >= '1' && name[0] <= '9' {
		if !sc.posKnown {
			return nil, nil, false, 0, false
		}
		n, _ := strconv.Atoi(name)
		if n <= len(sc.pos) {
			a := sc.pos[n-1]
			if a.dyn {
				return nil, nil, false, a.origins, false
			}
			return []string{a.v()}, nil, false, 0, true
		}
		return []string{""}, nil, false, 0, true
	}
	if v := w.vars[name]; v != nil {
		if v.isArr {
			if v.arr == nil {
				return nil, nil, true, v.origins, false
			}
			return nil, v.arr, true, 0, true
		}
		if v.vals == nil {
			return nil, nil, false, v.origins, false
		}
		return v.vals, nil, false, 0, true
	}
	switch name {
	case "IFS":
		return []string{" \t\n"}, nil, false, 0, true
	case "HOME":
		return []string{"~"}, nil, false, 0, true
	}
	return nil, nil, false, 0, false
}

// envLike reports whether an unknown variable name looks like one from
// the environment (PATH, HOME, SHELL...): string surgery on such a value
// is how ${PATH:0:1} builds a "/" the text never shows.
func envLike(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func (w *walker) expandParam(pt *part, sc *scope) [][]piece {
	// Substitutions in a subscript or an operator word may run whatever
	// the operator does with them (${x?$(cmd)} runs cmd for the message,
	// ${a[$(cmd)]} for the index): walk them all.
	if pt.index != nil {
		w.walkSubsIn(pt.index, sc)
	}
	if pt.arg != nil {
		w.walkSubsIn(pt.arg, sc)
	}
	name := pt.text
	vals, arr, isArr, origins, known := w.lookupVar(name, sc)
	ph := "${" + name + "}"
	if pt.op == "" && pt.index == nil && sc.posKnown && !known {
		if a, ok := positional(name, sc); ok && a.dyn {
			ph = a.p
		}
		if name == "@" || name == "*" {
			return positionalPieces(sc.pos, pt.quoted, name == "@")
		}
	}
	if pt.op != "" || pt.index != nil {
		ph = "$" + strings.TrimPrefix(partSource(pt), "$")
	}
	unres := func(susp bool) [][]piece {
		return [][]piece{{{unres: true, ph: ph, quoted: pt.quoted, susp: susp, origins: origins}}}
	}
	// Arrays and "$@".
	if isArr || pt.index != nil {
		if pt.op == "len" {
			if known && isArr {
				return [][]piece{{{text: strconv.Itoa(len(arr)), quoted: pt.quoted, split: !pt.quoted}}}
			}
			return unres(false)
		}
		if !known {
			if pt.op == ":-" || pt.op == "-" || pt.op == ":+" || pt.op == "+" || pt.op == ":=" || pt.op == "=" {
				return w.expandOpArg(pt, sc)
			}
			return unres(false)
		}
		var elems []string
		all := pt.index == nil && (name == "@" || name == "*")
		if pt.index != nil {
			idx := wordText(pt.index)
			switch idx {
			case "@", "*":
				all = true
				elems = arr
			default:
				if n, err := strconv.Atoi(strings.TrimSpace(idx)); err == nil && n >= 0 {
					if isArr {
						if n < len(arr) {
							elems = []string{arr[n]}
						} else {
							elems = []string{""}
						}
					} else if n == 0 {
						elems = vals[:1]
					} else {
						elems = []string{""}
					}
				} else {
					return unres(false)
				}
			}
			if !isArr && all {
				elems = vals[:1]
			}
		} else if isArr {
			if all {
				elems = arr
			} else if len(arr) > 0 {
				elems = arr[:1]
			} else {
				elems = []string{""}
			}
		}
		if pt.op != "" && pt.op != ":-" && pt.op != "-" {
			if len(elems) == 1 {
				return w.applyOp(pt, sc, []string{elems[0]}, origins, ph)
			}
			return unres(false)
		}
		if len(elems) == 0 && (pt.op == ":-" || pt.op == "-") {
			return w.expandOpArg(pt, sc)
		}
		if all && pt.quoted && (name == "@" || strings.HasSuffix(wordText(orEmpty(pt.index)), "@")) {
			var ps []piece
			for i, e := range elems {
				if i > 0 {
					ps = append(ps, piece{brk: true})
				}
				ps = append(ps, piece{text: e, quoted: true})
			}
			if len(elems) == 0 {
				ps = append(ps, piece{brk: true, ph: "empty"})
			}
			return [][]piece{ps}
		}
		return [][]piece{{{text: strings.Join(elems, " "), quoted: pt.quoted, split: !pt.quoted}}}
	}
	if !known {
		switch pt.op {
		case ":-", "-", ":=", "=", ":+", "+":
			out := w.expandOpArg(pt, sc)
			if pt.op == ":=" || pt.op == "=" {
				w.assignFrom(name, out)
			}
			return out
		case "", ":?", "?", "len":
			return unres(false)
		case "!":
			return unres(true)
		case "@":
			if wordText(orEmpty(pt.arg)) == "P" {
				return unres(true)
			}
			return unres(false)
		}
		return unres(envLike(name))
	}
	return w.applyOp(pt, sc, vals, origins, ph)
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

// positionalPieces expands $@ and $* when some arguments are unknown.
func positionalPieces(pos []arg, quoted, at bool) [][]piece {
	var ps []piece
	for i, a := range pos {
		if i > 0 {
			if quoted && at {
				ps = append(ps, piece{brk: true})
			} else {
				ps = append(ps, piece{text: " ", quoted: quoted, split: !quoted})
			}
		}
		if a.dyn {
			ps = append(ps, piece{unres: true, ph: a.p, quoted: quoted, origins: a.origins})
		} else {
			ps = append(ps, piece{text: a.v(), quoted: quoted, split: !quoted})
		}
	}
	return [][]piece{ps}
}

// walkSubsIn walks the command and process substitutions of a word (and
// of words nested in it) without expanding it.
func (w *walker) walkSubsIn(word *word, sc *scope) {
	for i := range word.parts {
		pt := &word.parts[i]
		switch pt.kind {
		case partCmdSub, partProcIn, partProcOut:
			if pt.sub != nil {
				w.walkSub(pt.sub, sc, nil)
			}
		case partParam:
			if pt.index != nil {
				w.walkSubsIn(pt.index, sc)
			}
			if pt.arg != nil {
				w.walkSubsIn(pt.arg, sc)
			}
		case partArith, partArray:
			for _, sw := range pt.words {
				w.walkSubsIn(sw, sc)
			}
		}
	}
}

// mayRunCode reports whether text holds a substitution that bash would
// run if the text were evaluated again (arithmetic on a variable's value,
// an array subscript in a name given to printf -v, read, unset...).
func mayRunCode(s string) bool {
	return strings.Contains(s, "$(") || strings.Contains(s, "`") || strings.Contains(s, "<(") || strings.Contains(s, ">(")
}

func orEmpty(w *word) *word {
	if w == nil {
		return &word{}
	}
	return w
}

// partSource is the source text of a ${...} part, for placeholders.
func partSource(pt *part) string {
	var b strings.Builder
	b.WriteString("${")
	if pt.op == "len" {
		b.WriteByte('#')
	}
	if strings.HasPrefix(pt.op, "!") {
		b.WriteByte('!')
	}
	b.WriteString(pt.text)
	if pt.index != nil {
		b.WriteString("[" + pt.index.raw + "]")
	}
	op := strings.TrimPrefix(pt.op, "!")
	if op != "" && op != "len" {
		b.WriteString(op)
	}
	if pt.arg != nil {
		b.WriteString(pt.arg.raw)
	}
	b.WriteByte('}')
	return b.String()
}

// expandOpArg expands the word of ${x:-word} and its kin.
func (w *walker) expandOpArg(pt *part, sc *scope) [][]piece {
	if pt.arg == nil {
		return [][]piece{{{text: "", quoted: pt.quoted}}}
	}
	alts := w.expandParts(pt.arg.parts, sc, false)
	if pt.quoted {
		for _, a := range alts {
			for i := range a {
				a[i].quoted = true
			}
		}
	} else {
		for _, a := range alts {
			for i := range a {
				if !a[i].quoted {
					a[i].split = true
				}
			}
		}
	}
	return alts
}

func (w *walker) assignFrom(name string, alts [][]piece) {
	var vals []string
	for _, a := range alts {
		var b strings.Builder
		for _, p := range a {
			if p.unres {
				w.setVar(name, nil, 0)
				return
			}
			b.WriteString(p.text)
		}
		vals = append(vals, b.String())
	}
	w.setVar(name, vals, 0)
}

// applyOp applies a ${name OP arg} operator to known values.
func (w *walker) applyOp(pt *part, sc *scope, vals []string, origins originSet, ph string) [][]piece {
	argText := func() (string, bool) {
		if pt.arg == nil {
			return "", true
		}
		alts := w.expandParts(pt.arg.parts, sc, true)
		if len(alts) != 1 {
			return "", false
		}
		var b strings.Builder
		for _, p := range alts[0] {
			if p.unres {
				return "", false
			}
			b.WriteString(p.text)
		}
		return b.String(), true
	}
	unres := func(susp bool) [][]piece {
		return [][]piece{{{unres: true, ph: ph, quoted: pt.quoted, susp: susp, origins: origins}}}
	}
	var out [][]piece
	emit := func(s string) {
		out = append(out, []piece{{text: s, quoted: pt.quoted, split: !pt.quoted}})
	}
	switch op := pt.op; op {
	case "":
		for _, v := range vals {
			emit(v)
		}
	case "len":
		for _, v := range vals {
			emit(strconv.Itoa(len([]rune(v))))
		}
	case ":-", "-", ":=", "=":
		for _, v := range vals {
			if v == "" && op[0] == ':' {
				out = append(out, w.expandOpArg(pt, sc)...)
			} else {
				emit(v)
			}
		}
	case ":+", "+":
		for _, v := range vals {
			if v == "" && op[0] == ':' {
				emit("")
			} else {
				out = append(out, w.expandOpArg(pt, sc)...)
			}
		}
	case ":?", "?":
		for _, v := range vals {
			emit(v)
		}
	case "#", "##", "%", "%%":
		pat, ok := argText()
		if !ok {
			return unres(false)
		}
		for _, v := range vals {
			emit(trimPattern(v, pat, op))
		}
	case "/", "//", "/#", "/%":
		arg, ok := argText()
		if !ok {
			return unres(true)
		}
		pat, rep, _ := strings.Cut(arg, "/")
		for _, v := range vals {
			emit(replacePattern(v, pat, rep, op))
		}
	case "^", "^^":
		for _, v := range vals {
			if op == "^" && v != "" {
				emit(strings.ToUpper(v[:1]) + v[1:])
			} else {
				emit(strings.ToUpper(v))
			}
		}
	case ",", ",,":
		for _, v := range vals {
			if op == "," && v != "" {
				emit(strings.ToLower(v[:1]) + v[1:])
			} else {
				emit(strings.ToLower(v))
			}
		}
	case ":":
		arg, ok := argText()
		if !ok {
			return unres(true)
		}
		offS, lenS, hasLen := strings.Cut(arg, ":")
		off, ok1 := w.arithValue(offS, sc)
		n, ok2 := int64(1<<31), true
		if hasLen {
			n, ok2 = w.arithValue(lenS, sc)
		}
		if !ok1 || !ok2 {
			return unres(true)
		}
		for _, v := range vals {
			emit(substring(v, off, n))
		}
	case "@":
		arg, _ := argText()
		for _, v := range vals {
			switch arg {
			case "P":
				return unres(true)
			case "E":
				emit(decodeANSIC(v))
			case "U":
				emit(strings.ToUpper(v))
			case "L":
				emit(strings.ToLower(v))
			default:
				emit(v)
			}
		}
	case "!":
		// ${!name}: the value names another variable.
		for _, v := range vals {
			if !shellsyntax.IsName(v) && !(len(v) == 1 && strings.IndexByte("@*#?-$!0123456789", v[0]) >= 0) {
				return unres(true)
			}
			inner := &part{kind: partParam, text: v, quoted: pt.quoted}
			out = append(out, w.expandParam(inner, sc)...)
		}
	default:
		return unres(true)
	}
	if len(out) > maxVariants {
		return unres(false)
	}
	return out
}

func substring(v string, off, n int64) string {
	r := []rune(v)
	l := int64(len(r))
	if off < 0 {
		off += l
		if off < 0 {
			return ""
		}
	}
	if off > l {
		return ""
	}
	end := l
	if n < 0 {
		end = l + n
	} else if off+n < l {
		end = off + n
	}
	if end < off {
		return ""
	}
	return string(r[off:end])
}

// globRegexp turns a shell pattern into an RE2 expression (unanchored
// body); RE2 keeps matching linear whatever the pattern.
func globRegexp(pat string) string {
	var b strings.Builder
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch c {
		case '*':
			b.WriteString("(?s:.*)")
		case '?':
			b.WriteString("(?s:.)")
		case '[':
			j := i + 1
			if j < len(pat) && (pat[j] == '!' || pat[j] == '^') {
				j++
			}
			if j < len(pat) && pat[j] == ']' {
				j++
			}
			for j < len(pat) && pat[j] != ']' {
				j++
			}
			if j >= len(pat) {
				b.WriteString(`\[`)
				continue
			}
			class := pat[i+1 : j]
			neg := false
			if class != "" && (class[0] == '!' || class[0] == '^') {
				neg = true
				class = class[1:]
			}
			b.WriteByte('[')
			if neg {
				b.WriteByte('^')
			}
			for k := 0; k < len(class); k++ {
				ch := class[k]
				if ch == '\\' || ch == '[' || ch == ']' || ch == '^' {
					b.WriteByte('\\')
				}
				b.WriteByte(ch)
			}
			b.WriteByte(']')
			i = j
		case '\\':
			if i+1 < len(pat) {
				i++
				b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

func trimPattern(v, pat, op string) string {
	if len(v) > 4096 {
		return v
	}
	re, err := regexp.Compile("^(?:" + globRegexp(pat) + ")$")
	if err != nil {
		return v
	}
	switch op {
	case "#":
		for i := 0; i <= len(v); i++ {
			if re.MatchString(v[:i]) {
				return v[i:]
			}
		}
	case "##":
		for i := len(v); i >= 0; i-- {
			if re.MatchString(v[:i]) {
				return v[i:]
			}
		}
	case "%":
		for i := len(v); i >= 0; i-- {
			if re.MatchString(v[i:]) {
				return v[:i]
			}
		}
	case "%%":
		for i := 0; i <= len(v); i++ {
			if re.MatchString(v[i:]) {
				return v[:i]
			}
		}
	}
	return v
}

func replacePattern(v, pat, rep, op string) string {
	if len(v) > 4096 || pat == "" {
		return v
	}
	body := globRegexp(pat)
	switch op {
	case "/#":
		body = "^(?:" + body + ")"
	case "/%":
		body = "(?:" + body + ")$"
	}
	re, err := regexp.Compile(body)
	if err != nil {
		return v
	}
	if op == "//" {
		return re.ReplaceAllLiteralString(v, rep)
	}
	done := false
	return re.ReplaceAllStringFunc(v, func(m string) string {
		if done {
			return m
		}
		done = true
		return rep
	})
}

// expandCmdSub runs the analysis over $(...) and returns its output when
// it can be worked out (echo, printf, decoders), or an unknown piece.
func (w *walker) expandCmdSub(pt *part, sc *scope) [][]piece {
	data := w.walkSub(pt.sub, sc, nil)
	if data.known() {
		var out [][]piece
		for _, t := range data.texts {
			t = strings.TrimRight(t, "\n")
			out = append(out, []piece{{text: t, quoted: pt.quoted, split: !pt.quoted, origins: data.origins}})
		}
		return out
	}
	var origins originSet
	if data != nil {
		origins = data.origins
	}
	return [][]piece{{{unres: true, ph: pt.text, quoted: pt.quoted, origins: origins}}}
}

// expandArith analyses the substitutions inside $((...)) and evaluates the
// expression when it is made of numbers and known variables.
func (w *walker) expandArith(pt *part, sc *scope) piece {
	var b strings.Builder
	ok := true
	for _, word := range pt.words {
		for _, alt := range w.expandParts(word.parts, sc, true) {
			for _, p := range alt {
				if p.unres {
					ok = false
				}
				b.WriteString(p.text)
			}
			break
		}
	}
	if ok {
		if v, good := w.arithValue(b.String(), sc); good {
			return piece{text: strconv.FormatInt(v, 10), quoted: pt.quoted, split: !pt.quoted}
		}
	}
	return piece{unres: true, ph: pt.text, quoted: pt.quoted}
}

// fieldsOf forms fields from pieces: unquoted expansion results are split
// on blanks, a field made only of unquoted unknowns is marked drop.
func fieldsOf(pieces []piece, assign bool) []arg {
	var out []arg
	var e, p strings.Builder
	var cur arg
	has := false      // the field has content and must be emitted
	onlyUnres := true // only unquoted unknowns so far
	unresBase := false
	finish := func() {
		if has {
			cur.e = normalise(e.String())
			cur.p = p.String()
			cur.drop = onlyUnres && cur.dyn
			cur.dynBase = unresBase
			out = append(out, cur)
		}
		e.Reset()
		p.Reset()
		cur = arg{}
		has = false
		onlyUnres = true
		unresBase = false
	}
	for i := range pieces {
		pc := &pieces[i]
		if pc.brk {
			if pc.ph == "empty" {
				continue
			}
			if i > 0 {
				finish()
			}
			continue
		}
		cur.origins |= pc.origins
		if pc.susp {
			cur.susp = true
		}
		if pc.data != nil {
			cur.data = pc.data
		}
		if pc.procOut != nil {
			cur.procOut = pc.procOut
		}
		if pc.unres {
			cur.dyn = true
			unresBase = true
			has = true
			p.WriteString(pc.ph)
			if pc.quoted {
				onlyUnres = false
			}
			continue
		}
		if pc.split && !pc.quoted && !assign {
			if hasGlob(pc.text) {
				cur.glob = true
			}
			text := pc.text
			for text != "" {
				j := strings.IndexAny(text, " \t\n")
				if j < 0 {
					e.WriteString(text)
					p.WriteString(text)
					if strings.IndexByte(text, '/') >= 0 {
						unresBase = false
					}
					has = true
					onlyUnres = false
					break
				}
				if j > 0 {
					e.WriteString(text[:j])
					p.WriteString(text[:j])
					if strings.IndexByte(text[:j], '/') >= 0 {
						unresBase = false
					}
					has = true
					onlyUnres = false
				}
				finish()
				text = strings.TrimLeft(text[j:], " \t\n")
			}
			continue
		}
		if !pc.quoted && !assign && hasGlob(pc.text) {
			cur.glob = true
		}
		e.WriteString(pc.text)
		p.WriteString(pc.text)
		if strings.IndexByte(pc.text, '/') >= 0 {
			unresBase = false
		}
		if pc.quoted || pc.text != "" {
			has = true
			onlyUnres = false
		}
	}
	finish()
	return out
}

// hasGlob reports whether s has a pathname pattern character: * or ?, or
// a [ with a ] after it.
func hasGlob(s string) bool {
	if strings.ContainsAny(s, "*?") {
		return true
	}
	if i := strings.IndexByte(s, '['); i >= 0 && strings.IndexByte(s[i+1:], ']') >= 0 {
		return true
	}
	return false
}

// braceExpand performs bash brace expansion on a word's parts. Only
// unquoted literal braces count. Results beyond maxBrace are refused.
func (w *walker) braceExpand(parts []part) [][]part {
	found := false
	for _, pt := range parts {
		if pt.kind == partLit && !pt.quoted && strings.IndexByte(pt.text, '{') >= 0 && strings.IndexByte(pt.text, '}') >= 0 {
			found = true
			break
		}
		if pt.kind == partLit && !pt.quoted && strings.IndexByte(pt.text, '{') >= 0 {
			found = true
		}
	}
	if !found {
		return [][]part{parts}
	}
	// Atoms: unquoted literal bytes are separate, everything else opaque.
	type atom struct {
		c    byte
		part *part
	}
	var atoms []atom
	for i := range parts {
		pt := &parts[i]
		if pt.kind == partLit && !pt.quoted {
			for j := 0; j < len(pt.text); j++ {
				atoms = append(atoms, atom{c: pt.text[j]})
			}
		} else {
			atoms = append(atoms, atom{part: pt})
		}
	}
	isC := func(a atom, c byte) bool { return a.part == nil && a.c == c }
	var expand func(as []atom, depth int) [][]atom
	expand = func(as []atom, depth int) [][]atom {
		if depth > 16 || w.err != nil {
			return [][]atom{as}
		}
		for open := 0; open < len(as); open++ {
			if !isC(as[open], '{') || (open > 0 && isC(as[open-1], '$')) {
				continue
			}
			// Find the matching close and top-level commas.
			level := 0
			var commas []int
			close := -1
			for k := open + 1; k < len(as) && close < 0; k++ {
				switch {
				case isC(as[k], '{'):
					level++
				case isC(as[k], '}'):
					if level == 0 {
						close = k
					} else {
						level--
					}
				case isC(as[k], ',') && level == 0:
					commas = append(commas, k)
				}
			}
			if close < 0 {
				continue
			}
			var alts [][]atom
			if len(commas) > 0 {
				start := open + 1
				for _, c := range append(commas, close) {
					alts = append(alts, as[start:c])
					start = c + 1
				}
			} else {
				// Sequence {a..z} or {1..9[..step]}.
				var body []byte
				for _, a := range as[open+1 : close] {
					if a.part != nil {
						body = nil
						break
					}
					body = append(body, a.c)
				}
				seq := braceSeq(string(body))
				if seq == nil {
					continue
				}
				if len(seq) > maxBrace {
					w.failParse("too_complex", "brace expansion makes too many words")
					return nil
				}
				for _, s := range seq {
					var sa []atom
					for k := 0; k < len(s); k++ {
						sa = append(sa, atom{c: s[k]})
					}
					alts = append(alts, sa)
				}
			}
			var out [][]atom
			for _, alt := range alts {
				n := make([]atom, 0, len(as))
				n = append(n, as[:open]...)
				n = append(n, alt...)
				n = append(n, as[close+1:]...)
				out = append(out, expand(n, depth+1)...)
				if len(out) > maxBrace {
					w.failParse("too_complex", "brace expansion makes too many words")
					return nil
				}
			}
			return out
		}
		return [][]atom{as}
	}
	results := expand(atoms, 0)
	if w.err != nil {
		return nil
	}
	out := make([][]part, 0, len(results))
	for _, as := range results {
		var ps []part
		var lit []byte
		for _, a := range as {
			if a.part == nil {
				lit = append(lit, a.c)
				continue
			}
			if len(lit) > 0 {
				ps = append(ps, part{kind: partLit, text: string(lit)})
				lit = nil
			}
			ps = append(ps, *a.part)
		}
		if len(lit) > 0 {
			ps = append(ps, part{kind: partLit, text: string(lit)})
		}
		out = append(out, ps)
	}
	return out
}

// braceSeq expands the body of {x..y[..step]}, or returns nil.
func braceSeq(body string) []string {
	fields := strings.Split(body, "..")
	if len(fields) != 2 && len(fields) != 3 {
		return nil
	}
	step := int64(1)
	if len(fields) == 3 {
		s, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil || s == 0 {
			return nil
		}
		if s < 0 {
			s = -s
		}
		step = s
	}
	a, errA := strconv.ParseInt(fields[0], 10, 64)
	b, errB := strconv.ParseInt(fields[1], 10, 64)
	var out []string
	if errA == nil && errB == nil {
		if (b-a)/step > maxBrace || (a-b)/step > maxBrace {
			return make([]string, maxBrace+1)
		}
		if a <= b {
			for v := a; v <= b; v += step {
				out = append(out, strconv.FormatInt(v, 10))
			}
		} else {
			for v := a; v >= b; v -= step {
				out = append(out, strconv.FormatInt(v, 10))
			}
		}
		return out
	}
	if len(fields[0]) == 1 && len(fields[1]) == 1 {
		x, y := fields[0][0], fields[1][0]
		if x <= y {
			for c := int(x); c <= int(y); c += int(step) {
				out = append(out, string(rune(c)))
			}
		} else {
			for c := int(x); c >= int(y); c -= int(step) {
				out = append(out, string(rune(c)))
			}
		}
		return out
	}
	return nil
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
	env := arithEnv{}
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
			vals, _, _, _, known := w.lookupVar(lit, sc)
			for _, v := range vals {
				if mayRunCode(v) {
					w.walkScriptLenient(v, &scope{depth: sc.depth + 1})
				}
			}
			if !known || len(vals) != 1 {
				ok = false
				return false
			}
			if _, err := strconv.ParseInt(strings.TrimSpace(vals[0]), 0, 64); err != nil {
				ok = false
				return false
			}
			env[lit] = strings.TrimSpace(vals[0])
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
	v, err := expand.Arithm(&expand.Config{Env: env}, x)
	if err != nil {
		return 0, false
	}
	return int64(v), true
}

// arithEnv holds the known variables of one arithmetic expression; it
// is read-only, so an assignment inside the expression is an error.
type arithEnv map[string]string

func (e arithEnv) Get(name string) expand.Variable {
	v, ok := e[name]
	if !ok {
		return expand.Variable{}
	}
	return expand.Variable{Set: true, Kind: expand.String, Str: v}
}

func (e arithEnv) Each(func(name string, vr expand.Variable) bool) {}
