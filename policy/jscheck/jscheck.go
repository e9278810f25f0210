package jscheck

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error reports a forbidden pattern found in JavaScript tool code.
type Error struct {
	// Pattern is the forbidden pattern as users see it in the docs,
	// such as "eval(" or "process".
	Pattern string
	// Line is the 1-based line of the tool code the pattern starts on.
	Line int
	// Reason says what the pattern is forbidden for.
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("forbidden pattern %q at line %d: %s", e.Pattern, e.Line, e.Reason)
}

// jsFollow says what must come after a forbidden name for it to match.
type jsFollow int

const (
	followNone jsFollow = iota // the name alone
	followCall                 // "(" or a template literal, optionally after "?."
)

// jsRule is one forbidden pattern. Rules match in code only: not in
// strings, template text, regular expressions or comments, not as a
// property name (obj.eval, {eval: 1}), and not as the operand of typeof.
type jsRule struct {
	pattern string
	name    string
	follow  jsFollow
	reason  string
}

// jsRules lists the forbidden patterns in reporting order: when two match
// at the same place, the earlier rule wins.
//
// What is refused, and why only this. The JavaScript executor runs each
// call in a fresh realm with code generation from strings switched off in
// the engine, and with no require, process, module loader or host global:
// mentions of process, globalThis, __dirname, global, __proto__ or
// constructor reach nothing outside the call, so the check does not refuse
// them (it used to, and refused ordinary code). What is left is code that
// tries to load or generate code: eval, the Function constructor called
// directly, import() and require(). None of it can run in this engine, so
// refusing it costs no working tool; and it is the one class where a
// change in the engine (the parser switch reaches into goja through
// reflection) would turn into an escape, so it is refused before the code
// is stored, as a second layer.
var jsRules = []jsRule{
	{"require(", "require", followCall, "loading host modules"},
	{"require(", "require", followNone, "loading host modules"},
	{"import(", "import", followCall, "dynamic module import"},
	{"eval(", "eval", followCall, "dynamic code evaluation"},
	{"eval(", "eval", followNone, "dynamic code evaluation"},
	{"Function(", "Function", followCall, "constructor-based code generation"},
}

// jsRuleNames maps a name to the indexes of its rules in jsRules.
var jsRuleNames = func() map[string][]int {
	m := make(map[string][]int)
	for i, r := range jsRules {
		m[r.name] = append(m[r.name], i)
	}
	return m
}()

// Check scans JavaScript tool code for forbidden patterns and returns
// a *Error for the first one in the text, or nil.
//
// The check is lexical and runs in linear time, so hostile input cannot make
// it hang or recurse; it never parses the code. A name matches only as a
// whole identifier ("processData" and "myeval(" are fine), whitespace and
// comments between a name and its "(", "." or "[" do not hide it, and
// \u escapes in identifiers are decoded first. Names are matched in code
// only: a mention in a string, comment or regular expression, a property
// of that name, or typeof's operand is not a use.
//
// The check is a first layer only: the JS executor removes or disables what
// these patterns reach for, whether or not the check saw them.
func Check(code string) error {
	src := decodeIdentEscapes(code)
	var inCode []bool // built on first need; see codeMask
	bestOff, bestRule := -1, -1
	for off := 0; off < len(src); {
		r, size := utf8.DecodeRuneInString(src[off:])
		if !isIdentRune(r) {
			off += size
			continue
		}
		start := off
		for off < len(src) {
			r, size = utf8.DecodeRuneInString(src[off:])
			if !isIdentRune(r) {
				break
			}
			off += size
		}
		for _, i := range jsRuleNames[src[start:off]] {
			rule := jsRules[i]
			if !followMatches(src, off, rule.follow) {
				continue
			}
			if inCode == nil {
				inCode = codeMask(src)
			}
			if !inCode[start] || isPropertyName(src, start, off) || afterTypeof(src, start) {
				continue
			}
			if bestOff == -1 || start < bestOff || start == bestOff && i < bestRule {
				bestOff, bestRule = start, i
			}
		}
		if bestOff != -1 {
			// Matches are found in text order, so the first hit is the
			// earliest; later identifiers cannot start before it.
			break
		}
	}
	if bestOff == -1 {
		return nil
	}
	rule := jsRules[bestRule]
	return &Error{Pattern: rule.pattern, Line: lineAt(src, bestOff), Reason: rule.reason}
}

// followMatches reports whether what comes after a name at off satisfies f.
func followMatches(src string, off int, f jsFollow) bool {
	if f == followNone {
		return true
	}
	off = skipSpace(src, off)
	switch f {
	case followCall:
		if strings.HasPrefix(src[off:], "?.") {
			off = skipSpace(src, off+2)
		}
		return strings.HasPrefix(src[off:], "(") || strings.HasPrefix(src[off:], "`")
	}
	return false
}

// afterTypeof reports whether the identifier at start is typeof's
// operand: "typeof eval" reads nothing and runs nothing.
func afterTypeof(src string, start int) bool {
	prev := strings.TrimRightFunc(src[:start], isJSSpace)
	prev = strings.TrimSuffix(prev, "(")
	prev = strings.TrimRightFunc(prev, isJSSpace)
	if !strings.HasSuffix(prev, "typeof") {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(prev[:len(prev)-len("typeof")])
	return !isIdentRune(r)
}

// isPropertyName reports whether the identifier at src[start:end] names a
// property rather than a variable: it follows "." or "?." (but not the
// spread "..."), or it is an object literal key ("{name:" or ", name:").
func isPropertyName(src string, start, end int) bool {
	prev := strings.TrimRightFunc(src[:start], isJSSpace)
	switch {
	case strings.HasSuffix(prev, "..."):
		return false
	case strings.HasSuffix(prev, "."):
		return true
	case strings.HasSuffix(prev, "{") || strings.HasSuffix(prev, ","):
		return strings.HasPrefix(src[skipSpace(src, end):], ":")
	}
	return false
}

// skipSpace skips whitespace, line terminators and comments.
func skipSpace(src string, off int) int {
	for off < len(src) {
		switch {
		case strings.HasPrefix(src[off:], "//"):
			end := strings.IndexAny(src[off:], "\n\r\u2028\u2029")
			if end < 0 {
				return len(src)
			}
			off += end
		case strings.HasPrefix(src[off:], "/*"):
			end := strings.Index(src[off+2:], "*/")
			if end < 0 {
				return len(src)
			}
			off += 2 + end + 2
		default:
			r, size := utf8.DecodeRuneInString(src[off:])
			if !isJSSpace(r) {
				return off
			}
			off += size
		}
	}
	return off
}

// isIdentRune reports whether r can be part of a JavaScript identifier.
// It errs on the side of "yes" for letters and marks, and treats invalid
// UTF-8 as a separator.
func isIdentRune(r rune) bool {
	switch {
	case r == '_' || r == '$':
		return true
	case r < utf8.RuneSelf:
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	case r == utf8.RuneError:
		return false
	case r == '\u200c' || r == '\u200d':
		return true
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nl, unicode.Pc)
}

// isJSSpace reports whether r is JavaScript whitespace or a line terminator.
func isJSSpace(r rune) bool {
	return r == '\ufeff' || unicode.IsSpace(r) || unicode.Is(unicode.Zs, r)
}

func isLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029'
}

// lineAt returns the 1-based line of byte offset off. \r\n counts once.
func lineAt(src string, off int) int {
	line := 1
	for i := 0; i < off; {
		r, size := utf8.DecodeRuneInString(src[i:])
		if isLineTerminator(r) && !(r == '\r' && i+1 < len(src) && src[i+1] == '\n') {
			line++
		}
		i += size
	}
	return line
}

// decodeIdentEscapes replaces \uXXXX and \u{X…} escapes that stand for
// identifier characters with those characters, so that \u0065val is seen as
// eval. Escapes for anything else are left alone; since no line terminator
// is ever produced, line numbers do not move.
func decodeIdentEscapes(src string) string {
	if !strings.Contains(src, `\u`) {
		return src
	}
	var sb strings.Builder
	sb.Grow(len(src))
	for i := 0; i < len(src); {
		if !strings.HasPrefix(src[i:], `\u`) {
			sb.WriteByte(src[i])
			i++
			continue
		}
		r, n := parseUnicodeEscape(src[i+2:])
		if n == 0 || !isIdentRune(r) {
			sb.WriteString(`\u`)
			i += 2
			continue
		}
		sb.WriteRune(r)
		i += 2 + n
	}
	return sb.String()
}

// parseUnicodeEscape parses what follows `\u`: four hex digits or {hex}.
// It returns the rune and the bytes consumed, or 0, 0.
func parseUnicodeEscape(s string) (rune, int) {
	if strings.HasPrefix(s, "{") {
		end := strings.IndexByte(s, '}')
		if end < 2 || end > 9 {
			return 0, 0
		}
		v, err := strconv.ParseUint(s[1:end], 16, 32)
		if err != nil || v > unicode.MaxRune {
			return 0, 0
		}
		return rune(v), end + 1
	}
	if len(s) < 4 {
		return 0, 0
	}
	v, err := strconv.ParseUint(s[:4], 16, 32)
	if err != nil {
		return 0, 0
	}
	return rune(v), 4
}
