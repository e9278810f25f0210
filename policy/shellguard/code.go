package shellguard

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// This file looks inside inline interpreter code (python -c, perl -e, node
// -e, ruby -e, php -r, awk programs, code piped into an interpreter), best
// effort: shell-outs of string literals, literal argument vectors, backtick
// commands and base64 literals are checked as commands.

// runInterp follows an interpreter to the code it runs: code in its
// options, the modules it loads with it, its program file, a code operand
// (awk), its script, or standard input.
func (w *walker) runInterp(seg *segment, lang string, sc *scope, stdin *data) {
	args := nonDropped(seg.args)
	r := shellsyntax.Read(seg)
	var code []arg
	var sources []*data
	mods := 0
	for _, o := range r.Opts {
		v, ok := optArg(args, o)
		switch {
		case !ok:
		case o.Kind == shellsyntax.OptCode:
			code = append(code, v)
		case o.Kind == shellsyntax.OptMod && mods < 4:
			// Code loaded with the program (perl -MFoo;code, php -d
			// auto_prepend_file=...) is checked too.
			mods++
			w.analyseCode(lang, seg.name, v.p, sc.depth+1)
		case o.Kind == shellsyntax.OptProg:
			sources = append(sources, w.fileData(v, stdin))
		}
	}
	if len(code) > 0 {
		sources = append(sources, joinData(code, "\n"))
	}
	switch {
	case r.Code >= 0:
		sources = append(sources, argData(args[r.Code]))
	case r.Script >= 0 && (strings.HasPrefix(args[r.Script].e, "http://") || strings.HasPrefix(args[r.Script].e, "https://")):
		sources = append(sources, &data{origins: originFetch})
	case r.Script >= 0:
		sources = append(sources, w.fileData(args[r.Script], stdin))
	case r.Stdin:
		sources = append(sources, stdin)
	}
	for _, codeData := range sources {
		if codeData == nil {
			continue
		}
		w.runData(codeData, seg, func(t string) {
			w.analyseCode(lang, seg.name, t, sc.depth+1)
			if pipesToShell.MatchString(t) {
				// The program writes text into a shell: what it reads may
				// be passed on, and what it generates is code.
				if stdin.known() {
					w.runShellData(stdin, &scope{depth: sc.depth + 1}, seg)
				}
				w.detected("shell_input", originDecode|originsOf(stdin), seg.text)
			}
		})
	}
}

// analyseCode looks inside interpreter code, best effort: it records the
// code for code_regex rules, checks string literals handed to a shell-out
// function as shell commands (and literal lists as argument vectors), and
// decodes base64 literals it finds.
func (w *walker) analyseCode(lang, interp, code string, depth int) {
	if depth > maxDepth {
		w.tooDeep()
		return
	}
	if !w.spend(1 + len(code)/256) {
		return
	}
	w.addSeg(&segment{kind: segCode, name: interp, code: code, text: interp + " " + code})
	lits, lists, ticks := codeLiterals(code, lang)
	w.checkMetadata(lits...) // literals joined by + or . may spell an address
	lits = lits[:min(len(lits), 64)]
	scope := &scope{depth: depth + 1}
	for _, t := range ticks {
		w.walkScriptLenient(t, scope)
	}
	if shellsOut.MatchString(code) {
		for _, l := range lits {
			w.walkScriptLenient(l, scope)
		}
		for k, l := range lists {
			if k >= 16 || len(l) == 0 {
				break
			}
			w.runCommand(&segment{kind: segCmd, args: literalArgs(l)}, scope, nil, pipeCtx{})
		}
	}
	for _, l := range lits {
		if dec, ok := looksBase64(l); ok {
			w.walkScriptLenient(dec, scope)
			w.analyseCode(lang, interp, dec, depth+1)
		}
	}
}

// walkScriptLenient checks text that may or may not be a shell command
// (a string literal): text the shell could not parse is not run by it.
func (w *walker) walkScriptLenient(src string, sc *scope) {
	if w.err != nil || strings.TrimSpace(src) == "" || len(src) > maxInput {
		return
	}
	if sc.depth > maxDepth {
		w.tooDeep()
		return
	}
	f, err := parseLenient(src, sc.depth, &w.work)
	if f == nil {
		w.err = err // a limit stops the analysis; text that does not parse runs nothing
		return
	}
	// What may or may not run is judged by the rules only: a name that is
	// unknown here is no finding.
	w.defWalk++
	w.walkFile(f, src, sc, nil)
	w.defWalk--
}

// shellsOut matches the functions interpreters run commands with.
var shellsOut = regexp.MustCompile(`(?i)\b(system|popen|popen[234]|exec[a-z]*|spawn[a-z]*|check_call|check_output|getoutput|getstatusoutput|call|run|subprocess|shell_exec|passthru|proc_open|pcntl_exec|child_process|execsync|execfile|spawnsync|io\.popen|open3|pty|os\.execute|runtime|processbuilder|qx|getline|%x|syscall)\b|\|\s*"|\$\(|` + "`")

// pipesToShell matches code that opens a pipe into a shell: awk's
// print | "sh", perl's open(F, "|sh"), python's popen("sh", "w").
var pipesToShell = regexp.MustCompile(`\|\s*&?\s*["'](/bin/|/usr/bin/)?(ba|da|z|k|a|mk)?sh\b|open\s*\(\s*\w*\s*,?\s*["']\s*\|\s*(/bin/)?(ba|da|z|k)?sh|popen\s*\(\s*["'](/bin/)?(ba|da|z|k)?sh["']\s*,\s*["']w`)

// looksBase64 decodes s when it is long base64 that decodes to text.
func looksBase64(s string) (string, bool) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_\n"
	if len(s) < 12 || len(s) > maxDecoded || strings.Trim(s, alphabet) != "" {
		return "", false
	}
	dec, ok := decodeBase64(s)
	if !ok || dec == "" || !utf8.ValidString(dec) {
		return "", false
	}
	// Text: at most a tenth of its characters are control characters.
	control := 0
	for _, r := range dec {
		if r < 0x20 && r != '\n' && r != '\t' {
			control++
		}
	}
	return dec, 10*control <= utf8.RuneCountInString(dec)
}

// codeLiterals extracts the string literals of interpreter code with
// their escapes decoded, literals joined by + or . (concatenation), lists
// of literals in brackets (argument vectors), and the bodies of backtick
// commands in perl, ruby and php.
func codeLiterals(code, lang string) (lits []string, lists [][]string, ticks []string) {
	type lit struct {
		s          string
		start, end int
	}
	var ls []lit
	for i := 0; i < len(code) && len(ls) < 256; i++ {
		c := code[i]
		switch c {
		case '#':
			if lang == "python" || lang == "ruby" || lang == "perl" {
				for i < len(code) && code[i] != '\n' {
					i++
				}
			}
			continue
		case '\'', '"', '`':
		default:
			// perl qx{...}/qx(...), ruby %x(...)
			if (lang == "perl" && strings.HasPrefix(code[i:], "qx") || lang == "ruby" && strings.HasPrefix(code[i:], "%x")) && i+2 < len(code) {
				close := code[i+2]
				if k := strings.IndexByte("{([<", close); k >= 0 {
					close = "})]>"[k]
				}
				if end := strings.IndexByte(code[i+3:], close); end >= 0 {
					ticks = append(ticks, code[i+3:i+3+end])
					i += 3 + end
				}
			}
			continue
		}
		// The closing delimiter: the quote, or python's triple quote.
		delim := code[i : i+1]
		if lang == "python" && strings.HasPrefix(code[i:], strings.Repeat(delim, 3)) {
			delim = code[i : i+3]
		}
		start, j := i, i+len(delim)
		var b strings.Builder
		for j < len(code) && !strings.HasPrefix(code[j:], delim) {
			switch {
			case code[j] != '\\' || j+1 == len(code):
				b.WriteByte(code[j])
				j++
			case c == '\'' && (lang == "perl" || lang == "php" || lang == "ruby"):
				if code[j+1] != '\'' && code[j+1] != '\\' {
					b.WriteByte('\\') // only \' and \\ are escapes in single quotes
				}
				b.WriteByte(code[j+1])
				j += 2
			case code[j+1] >= '0' && code[j+1] <= '7':
				v, m := octPrefix(code[j+1:], 3) // \NNN (printf's \0 takes three more digits)
				b.WriteByte(byte(v))
				j += 1 + m
			default:
				n, t := printfEscape(code[j:])
				b.WriteString(t)
				j += n
			}
		}
		if j == len(code) {
			break // not closed
		}
		j += len(delim)
		if c == '`' && (lang == "perl" || lang == "ruby" || lang == "php" || lang == "julia") {
			ticks = append(ticks, b.String())
		} else {
			ls = append(ls, lit{s: b.String(), start: start, end: j})
		}
		i = j - 1
	}
	// Concatenations and lists.
	for k := 0; k < len(ls); k++ {
		lits = append(lits, ls[k].s)
	}
	joined := ""
	inJoin := false
	var list []string
	flush := func() {
		if inJoin {
			lits = append(lits, joined)
			inJoin = false
		}
		if list != nil {
			lists = append(lists, list)
			lits = append(lits, strings.Join(list, " "))
			list = nil
		}
	}
	for k := 1; k < len(ls); k++ {
		switch strings.TrimSpace(code[ls[k-1].end:ls[k].start]) {
		case "+", ".", "..", "":
			if !inJoin {
				joined = ls[k-1].s
				inJoin = true
			}
			joined += ls[k].s
		case ",", ", [", ",[", "], [", "],[", ", (", ",(":
			if list == nil {
				list = []string{ls[k-1].s}
			}
			list = append(list, ls[k].s)
		default:
			flush()
		}
	}
	flush()
	return lits, lists, ticks
}
