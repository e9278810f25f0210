package policy

import "strings"

// The tree the walker consumes: lists, and-or lists, pipelines, commands,
// words and redirections, as shellsyntax.go builds them from
// mvdan.cc/sh's syntax tree.

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
