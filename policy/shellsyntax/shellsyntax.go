// Package shellsyntax is what the shell deny rules (policy/shellguard) and
// the shell templates (policy/template) share about shell text: the parser
// (mvdan.cc/sh/v3), the table of program grammars with the one walker that
// reads a command's options against it (options.go), the reader that says
// what a program does with its words (read.go: the command a wrapper runs,
// its code, its script, standard input), the options that write files or
// name programs (effects.go; git's subcommands and settings in git.go),
// the variables programs run as commands (env.go), and the name rules.
package shellsyntax

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// bashParsers holds idle bash parsers: a new one allocates several
// kilobytes, as much as the rest of a typical check. A parser keeps no
// state from one parse to the next.
var bashParsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// ParseBash parses src as a bash script.
func ParseBash(src string) (*syntax.File, error) {
	p := bashParsers.Get().(*syntax.Parser)
	defer bashParsers.Put(p)
	return p.Parse(strings.NewReader(src), "")
}

// IsNameByte reports whether c may stand in a shell variable name (first:
// at its start).
func IsNameByte(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}

// IsName reports whether s is a shell variable name.
func IsName(s string) bool { return syntax.ValidName(s) }

// commentParsers are bash parsers that keep comments, for the template
// check (a placeholder in a comment is refused).
var commentParsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
}}

// ParseBashComments parses src as a bash script, keeping its comments.
func ParseBashComments(src string) (*syntax.File, error) {
	p := commentParsers.Get().(*syntax.Parser)
	defer commentParsers.Put(p)
	return p.Parse(strings.NewReader(src), "")
}

// ParseArithm parses expr as a bash arithmetic expression.
func ParseArithm(expr string) (syntax.ArithmExpr, error) {
	p := bashParsers.Get().(*syntax.Parser)
	defer bashParsers.Put(p)
	return p.Arithmetic(strings.NewReader(expr))
}

// ParseDocument parses text as the body of a here-document: one word of
// text with expansions.
func ParseDocument(text string) (*syntax.Word, error) {
	p := bashParsers.Get().(*syntax.Parser)
	defer bashParsers.Put(p)
	return p.Document(strings.NewReader(text))
}

// Quote returns s as one single-quoted shell word. A single quote in s
// closes the quoting, is written escaped, and reopens it:
//
//	it's  ->  'it'\''s'
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// WordSet is the set of the words of s (separated by white space).
func WordSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(s) {
		set[w] = true
	}
	return set
}

// DeepBrackets returns the offset at which ( and { outside single quotes
// and escapes nest deeper than limit, or -1: a cheap upper bound of the
// parse tree's depth. The parser backtracks on deep $(( nesting (10,000
// levels take seconds), so text this deep is refused before it is parsed.
func DeepBrackets(src string, limit int) int {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '\'':
			if j := strings.IndexByte(src[i+1:], '\''); j >= 0 {
				i += j + 1
			}
		case '(', '{':
			if depth++; depth > limit {
				return i
			}
		case ')', '}':
			depth = max(depth-1, 0)
		}
	}
	return -1
}
