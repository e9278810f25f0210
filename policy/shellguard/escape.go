package shellguard

import (
	"regexp"
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// This file follows shell escapes inside other programs' command
// languages: sqlite3's .shell/.system (and "|cmd" outputs), dc's and ed's
// "!", vi/ex ":!cmd", less/more "+!cmd", Tcl's (expect, tclsh, wish)
// spawn/exec/system, make recipes read from standard input or --eval, the
// SQL clients' \! and COPY ... PROGRAM, ftp's "!" and Emacs Lisp's
// shell-command. What such an escape runs is walked like sh -c text, so
// the payload meets every rule.

// escapeLang maps a program to the command language it reads.
var escapeLang = map[string]string{
	"sqlite3": "sqlite", "sqlite": "sqlite",
	"dc": "dc",
	"ed": "ed", "red": "ed",
	"ex": "vi", "vi": "vi", "vim": "vi", "nvim": "vi", "view": "vi", "vimdiff": "vi", "gvim": "vi", "rvim": "vi",
	"less": "less", "more": "less", "most": "less", "pg": "less",
	"expect": "tcl", "tclsh": "tcl", "wish": "tcl", "jimsh": "tcl",
	"make": "make", "gmake": "make", "bmake": "make", "remake": "make",
	"mysql": "sql", "mariadb": "sql", "psql": "sql",
	"ftp": "bang", "lftp": "bang", "tnftp": "bang", "sftp": "bang",
	"emacs": "elisp", "emacsclient": "elisp",
}

// escapeScripts is at most how many texts of one program are read.
const escapeScripts = 8

// runEscapes walks the shell commands a program's own command language runs.
func (w *walker) runEscapes(seg *segment, sc *scope, stdin *data) {
	lang, ok := escapeLang[seg.name]
	if !ok {
		return
	}
	var texts []string
	add := func(d *data) {
		if d != nil {
			texts = append(texts, d.texts[:min(len(d.texts), escapeScripts-len(texts))]...)
		}
	}
	all := nonDropped(seg.args)
	args := all[1:]
	switch lang {
	case "sqlite", "dc", "tcl", "sql":
		// Every operand, option value and file may hold commands; reading
		// too much only checks more.
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch a.e {
			case "-f", "--file", "-init", "-f=", "-s":
				if i+1 < len(args) {
					i++
					add(w.fileData(args[i], stdin))
				}
				continue
			}
			add(argData(a))
			add(w.fileData(a, stdin))
		}
	case "ed", "bang":
		// ed (and ftp's "!") read commands from standard input only.
	case "elisp":
		for i := 0; i < len(args); i++ {
			a := args[i].p
			switch {
			case (a == "--eval" || a == "-eval") && i+1 < len(args):
				i++
				add(argData(args[i]))
			case strings.HasPrefix(a, "--eval="):
				add(&data{texts: []string{a[len("--eval="):]}})
			}
		}
	case "vi", "less", "make":
		// Option values the grammar (policy/shellsyntax) names: commands
		// (vim -c, make --eval) and files of them (vim -S, make -f).
		for _, o := range shellsyntax.Read(seg).Opts {
			v, ok := optArg(all, o)
			switch {
			case ok && o.Kind == shellsyntax.OptCode:
				add(argData(v))
			case ok && o.Kind == shellsyntax.OptProg:
				add(w.fileData(v, stdin))
			}
		}
		for i, a := range args {
			switch {
			case lang != "make" && strings.HasPrefix(a.p, "+"):
				add(&data{texts: []string{a.p[1:]}})
			case lang == "vi" && a.e == "-s" && i+1 < len(args):
				add(w.fileData(args[i+1], stdin)) // normal-mode commands from a file
			}
		}
	}
	if lang != "elisp" && lang != "less" && lang != "make" {
		add(stdin) // the program reads commands from standard input
	}
	inner := &scope{depth: sc.depth + 1}
	if lang == "sql" {
		// The statements themselves meet code_regex rules (DROP DATABASE
		// fed on standard input).
		for _, t := range texts {
			w.addSeg(&segment{kind: segCode, name: seg.name, code: t, text: seg.name + " " + t})
		}
	}
	for _, t := range texts {
		if lang == "vi" {
			// :lua, :py3, :perl, :ruby run code in an embedded
			// interpreter: judged as that language's inline code.
			for _, line := range strings.Split(t, "\n") {
				if l, code, ok := vimInterp(strings.TrimLeft(line, ": ")); ok {
					w.analyseCode(l, seg.name, code, sc.depth+1)
				}
			}
		}
		for _, cmd := range escapeCommands(lang, t) {
			if w.err != nil {
				return
			}
			if lang != "tcl" {
				w.walkScript(cmd, inner, nil)
			} else if argv := tclWords(cmd); len(argv) > 0 {
				w.runCommand(&segment{kind: segCmd, args: literalArgs(argv)}, inner, nil, pipeCtx{})
			}
		}
	}
}

var (
	// An ed or ex command line whose command is "!" (after an optional
	// address range, ":" and "silent"), or r/w/e with a "!cmd" operand.
	edEscape = regexp.MustCompile(`^[\s:]*(silent!?\s+)?[0-9,.$;+'%\-\sa-z]*?(r|w|e|E|W|read|write|edit)?\s*!(.*)$`)
	// vi's system() and friends.
	viSystem = regexp.MustCompile(`\b(system|systemlist|jobstart|termopen)\s*\(\s*['"]([^'"]+)['"]`)
	// make's $(shell ...).
	makeShell = regexp.MustCompile(`\$[({]shell\s+([^)}]*)[)}]`)
	// The SQL clients' shell escapes.
	sqlShell = regexp.MustCompile(`(?i)^\\!\s*(.+)$|^(?:\\)?system\s+(.+)$|\bprogram\s+'((?:[^']|'')*)'|^\\[og]\s*\|\s*(.+)$`)
	// Emacs Lisp: (shell-command "CMD"), its kin, (delete-directory "DIR" t).
	elispShell = regexp.MustCompile(`\((?:async-)?shell-command(?:-to-string)?\s+"((?:[^"\\]|\\.)*)"|\(delete-directory\s+"((?:[^"\\]|\\.)*)"\s+t\b`)
)

// escapeCommands returns the shell command lines a script in lang runs.
func escapeCommands(lang, text string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for _, line := range lines[:min(len(lines), 256)] {
		if len(out) >= 32 {
			break
		}
		trim := strings.TrimSpace(line)
		switch lang {
		case "sqlite":
			name, rest, _ := strings.Cut(trim, " ")
			switch name {
			case ".shell", ".system":
				out = append(out, rest)
			case ".once", ".output", ".import", ".read", ".open":
				for rest = strings.TrimSpace(rest); strings.HasPrefix(rest, "-"); rest = strings.TrimSpace(rest) {
					_, rest, _ = strings.Cut(rest, " ") // an option
				}
				rest = strings.Trim(rest, `'"`)
				if strings.HasPrefix(rest, "|") {
					out = append(out, rest[1:])
				}
			}
		case "dc":
			for i := 0; i < len(trim); i++ {
				if trim[i] == '!' && (i+1 >= len(trim) || !strings.ContainsRune("<>=", rune(trim[i+1]))) {
					out = append(out, trim[i+1:])
					break
				}
			}
		case "ed", "vi":
			if m := edEscape.FindStringSubmatch(trim); m != nil {
				out = append(out, m[3])
			}
			if lang == "vi" {
				for _, m := range viSystem.FindAllStringSubmatch(trim, 4) {
					out = append(out, m[2])
				}
			}
		case "less", "bang":
			if strings.HasPrefix(trim, "!") {
				out = append(out, trim[1:])
			}
		case "sql":
			// \! CMD and \system CMD run a shell; psql's COPY ... TO/FROM
			// PROGRAM 'CMD' runs one on the server, \o |CMD and \g |CMD
			// pipe into one.
			for _, m := range sqlShell.FindAllStringSubmatch(trim, 8) {
				for _, g := range m[1:] {
					if g != "" {
						out = append(out, strings.ReplaceAll(g, "''", "'"))
					}
				}
			}
		case "elisp":
			for _, m := range elispShell.FindAllStringSubmatch(trim, 8) {
				if m[1] != "" {
					out = append(out, m[1])
				} else {
					// (delete-directory DIR t) deletes recursively.
					out = append(out, "rm -r -- "+quote(m[2]))
				}
			}
		case "tcl":
			for _, stmt := range strings.Split(trim, ";") {
				stmt = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(stmt), "["))
				name, rest, _ := strings.Cut(stmt, " ")
				switch name {
				case "spawn", "exec", "system", "open":
					rest = strings.TrimRight(strings.TrimSpace(rest), "]")
					for strings.HasPrefix(rest, "-") {
						_, rest, _ = strings.Cut(rest, " ")
					}
					if name == "open" {
						// open "|cmd": a pipe to a command.
						rest = strings.Trim(rest, `"{}`)
						if !strings.HasPrefix(rest, "|") {
							continue
						}
						rest = rest[1:]
					}
					out = append(out, rest)
				}
			}
		case "make":
			if strings.HasPrefix(line, "\t") {
				out = append(out, strings.TrimLeft(trim, "@-+"))
			} else if i := strings.Index(trim, ":"); i >= 0 && !strings.HasPrefix(trim, "#") {
				if j := strings.Index(trim[i:], ";"); j >= 0 {
					out = append(out, strings.TrimLeft(strings.TrimSpace(trim[i+j+1:]), "@-+"))
				}
			}
			for _, m := range makeShell.FindAllStringSubmatch(line, 4) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// tclWords splits a Tcl command into words: {...} and "..." group.
func tclWords(s string) []string {
	var words []string
	for len(words) < 64 {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			break
		}
		// The word is s[open:close]; the next starts after close.
		open, close := 1, len(s)
		switch s[0] {
		case '{':
			depth := 0
			for i := 0; i < len(s); i++ {
				if s[i] == '{' {
					depth++
				} else if s[i] == '}' {
					if depth--; depth == 0 {
						close = i
						break
					}
				}
			}
		case '"':
			if k := strings.IndexByte(s[1:], '"'); k >= 0 {
				close = k + 1
			}
		default:
			open = 0
			if k := strings.IndexAny(s, " \t"); k >= 0 {
				close = k
			}
		}
		words = append(words, s[open:close])
		if close+1 >= len(s) {
			break
		}
		s = s[close+1:]
	}
	return words
}
