package jscheck

import (
	"unicode/utf8"
)

// codeMask returns, for each byte of src, whether it is JavaScript code as
// opposed to the inside of a string, template text, regular expression
// literal or comment. It is a lexer, not a parser: one pass, no recursion
// (template substitutions nest through an explicit stack), and it tells a
// regular expression from a division by the token before the slash, the
// way JavaScript tools usually do. Unterminated literals end at the end of
// their line (strings, regular expressions) or of the text (comments,
// templates).
func codeMask(src string) []bool {
	mask := make([]bool, len(src))
	var subst []int // brace depth at each open template substitution
	depth := 0
	regexOK := true // a '/' here would start a regular expression
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			i = skipLine(src, i)
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i = skipBlockComment(src, i)
		case c == '\'' || c == '"':
			i = skipString(src, i)
			regexOK = false
		case c == '`':
			var open bool
			if i, open = skipTemplateText(src, i+1); open {
				mask[i-2], mask[i-1] = true, true // "${"
				subst = append(subst, depth)
				depth++
				regexOK = true
			} else {
				regexOK = false
			}
		case c == '/' && regexOK:
			i = skipRegexp(src, i)
			regexOK = false
		case c == '}' && len(subst) > 0 && depth-1 == subst[len(subst)-1]:
			mask[i] = true
			depth--
			subst = subst[:len(subst)-1]
			var open bool
			if i, open = skipTemplateText(src, i+1); open {
				mask[i-2], mask[i-1] = true, true
				subst = append(subst, depth)
				depth++
				regexOK = true
			} else {
				regexOK = false
			}
		default:
			r, size := utf8.DecodeRuneInString(src[i:])
			switch {
			case isIdentRune(r):
				start := i
				for i < len(src) {
					r, size = utf8.DecodeRuneInString(src[i:])
					if !isIdentRune(r) {
						break
					}
					mask[i] = true
					i += size
				}
				regexOK = keywordBeforeExpression[src[start:i]]
				continue
			case isJSSpace(r):
				// Whitespace changes nothing.
			case c == '{':
				depth++
				regexOK = true
			case c == '}':
				depth--
				regexOK = false
			case c == ')' || c == ']':
				regexOK = false
			case (c == '+' || c == '-') && i+1 < len(src) && src[i+1] == c:
				mask[i] = true
				i++
				regexOK = false
			default:
				regexOK = true
			}
			for j := i; j < i+size; j++ {
				mask[j] = true
			}
			i += size
		}
	}
	return mask
}

// keywordBeforeExpression holds the words after which a '/' starts a
// regular expression rather than a division.
var keywordBeforeExpression = map[string]bool{
	"return": true, "typeof": true, "instanceof": true, "in": true, "of": true,
	"new": true, "delete": true, "void": true, "throw": true, "case": true,
	"do": true, "else": true, "yield": true, "await": true,
}

// skipLine returns the offset of the line terminator ending the line at i.
func skipLine(src string, i int) int {
	for i < len(src) {
		r, size := utf8.DecodeRuneInString(src[i:])
		if isLineTerminator(r) {
			return i
		}
		i += size
	}
	return i
}

func skipBlockComment(src string, i int) int {
	for i += 2; i < len(src); i++ {
		if src[i] == '*' && i+1 < len(src) && src[i+1] == '/' {
			return i + 2
		}
	}
	return i
}

// skipString skips a quoted string starting at i.
func skipString(src string, i int) int {
	quote := src[i]
	for i++; i < len(src); {
		r, size := utf8.DecodeRuneInString(src[i:])
		switch {
		case src[i] == quote:
			return i + 1
		case src[i] == '\\':
			i++ // the escaped character, including a line continuation
			if i < len(src) {
				_, size = utf8.DecodeRuneInString(src[i:])
			}
		case isLineTerminator(r):
			return i
		}
		i += size
	}
	return i
}

// skipTemplateText skips template text starting at i (just after "`" or the
// "}" that closed a substitution). It returns the offset after the closing
// "`", with open false, or after "${", with open true.
func skipTemplateText(src string, i int) (int, bool) {
	for i < len(src) {
		switch {
		case src[i] == '\\':
			i += 2
		case src[i] == '`':
			return i + 1, false
		case src[i] == '$' && i+1 < len(src) && src[i+1] == '{':
			return i + 2, true
		default:
			i++
		}
	}
	return len(src), false
}

// skipRegexp skips a regular expression literal starting at i, flags
// included as ordinary identifier characters left to the caller.
func skipRegexp(src string, i int) int {
	inClass := false
	for i++; i < len(src); {
		r, size := utf8.DecodeRuneInString(src[i:])
		switch {
		case isLineTerminator(r):
			return i
		case src[i] == '\\':
			i++
			if i < len(src) {
				_, size = utf8.DecodeRuneInString(src[i:])
			}
		case src[i] == '[':
			inClass = true
		case src[i] == ']':
			inClass = false
		case src[i] == '/' && !inClass:
			return i + 1
		}
		i += size
	}
	return i
}
