package shellguard

import (
	"strings"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

// The tree the walker consumes: lists, and-or lists, pipelines, commands,
// words and redirections, as syntax.go builds them from
// mvdan.cc/sh's syntax tree.

// cmdList is a sequence of and-or lists separated by ; & or newlines.
type cmdList struct {
	items []*andOr
}

// andOr is pipelines joined by && and ||, possibly run in the background.
type andOr struct {
	pipes []*pipeline
	bg    bool
}

// pipeline is commands joined by | or |&.
type pipeline struct {
	cmds []*command
}

type cmdKind uint8

const (
	cmdSimple cmdKind = iota
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

// command is one command of a pipeline.
type command struct {
	kind    cmdKind
	assigns []*word // NAME=value prefixes of a simple command
	words   []*word
	redirs  []*redir
	lists   []*cmdList
	name    string   // for/select variable, function name
	fn      *command // function body
}

type partKind uint8

const (
	partLit     partKind = iota // literal text
	partParam                   // $name, ${name...}
	partCmdSub                  // $(...) and `...`
	partArith                   // $((...)): only the substitutions inside matter
	partProcIn                  // <(...)
	partProcOut                 // >(...)
	partArray                   // ( ... ) of NAME=( ... )
	partGlob                    // extglob @(...) and friends, kept literally
)

// part is one piece of a word.
type part struct {
	kind   partKind
	quoted bool     // literal: quoted or escaped; expansion: inside "..."
	text   string   // literal text, parameter name, or source text
	op     string   // parameter operator: ":-", "#", "/", ":" (substring)...
	arg    *word    // operator argument, or array index with op "[]"
	index  *word    // array subscript
	sub    *cmdList // command or process substitution
	words  []*word  // array elements; substitutions inside $((...))
}

// word is one word as written: its parts and its source text.
type word struct {
	parts  []part
	raw    string
	inline [1]part // storage for the common one-part word
}

// redir is a redirection. Here-documents keep their body.
type redir struct {
	fd         string
	op         string
	target     *word
	delim      string
	stripTabs  bool
	hereQuoted bool
	hereRaw    string // body as written
	hereBody   *word  // body parsed for expansions (unquoted delimiter)
}

// isAssignPrefix reports whether s (the word so far) is NAME or NAME+ or
// NAME[sub] before an "=".
func isAssignPrefix(s string) bool {
	s = strings.TrimSuffix(s, "+")
	if i := strings.IndexByte(s, '['); i > 0 && strings.HasSuffix(s, "]") {
		s = s[:i]
	}
	return shellsyntax.IsName(s)
}

// isAssignment reports whether a word is NAME=value (an assignment when
// it comes before the command name).
func isAssignment(w *word) bool {
	if len(w.parts) == 0 || w.parts[0].kind != partLit || w.parts[0].quoted {
		return false
	}
	t := w.parts[0].text
	eq := strings.IndexByte(t, '=')
	if eq <= 0 {
		return false
	}
	return isAssignPrefix(t[:eq])
}

// wordText is the word's literal text with quotes removed and expansions
// left as written; for names (functions, here-doc delimiters).
func wordText(w *word) string {
	var b strings.Builder
	for _, pt := range w.parts {
		b.WriteString(pt.text)
	}
	return b.String()
}
