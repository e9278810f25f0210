package shellguard

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits on what the shell rules will look at. Anything beyond them is
// refused with group "parse": a tool command never needs more.
const (
	maxInput    = 64 << 10 // bytes of command text
	maxDepth    = 8        // nesting of subshells, substitutions and payloads
	maxWork     = 200_000  // units of parse and analysis work per check
	maxSegments = 20_000   // commands collected per check
	maxVariants = 16       // argument lists one command may expand to
	maxBrace    = 256      // words one brace expansion may produce
	maxDecoded  = 256 << 10
)

// checkInput refuses text that no shell command of a tool needs and
// that could make the shell see something the rules do not: NUL, control
// characters other than tab and newline, invalid UTF-8 and oversize input.
func checkInput(s string) *DeniedError {
	if len(s) > maxInput {
		return parseErr("too_long", "command text is longer than 64 KiB", s)
	}
	if !utf8.ValidString(s) {
		return parseErr("invalid_utf8", "command text is not valid UTF-8", s)
	}
	for _, r := range s {
		switch {
		case r == 0:
			return parseErr("nul_byte", "command text contains a NUL byte", s)
		case r == '\t' || r == '\n':
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			return parseErr("control_char", "command text contains the control character "+strconv.QuoteRune(r), s)
		}
	}
	return nil
}

// normalise folds text the way the rules compare it: invisible
// characters (zero-width, bidi controls, soft hyphen, variation selectors,
// Unicode format characters in general) are removed and the result is put
// in NFKC, so fullwidth letters, ligatures and compatibility spaces compare
// as their ASCII counterparts. It is applied to words after the shell's own
// parsing, never to the text that is parsed: NFKC turns U+FF02 into a real
// quote, which would change what the shell is believed to run.
func normalise(s string) string {
	n := 0
	for n < len(s) && s[n] < utf8.RuneSelf {
		n++
	}
	if n == len(s) {
		return s // ASCII: nothing to fold
	}
	// Removing a character can leave a sequence NFKC composes, and NFKC
	// output is stripped again: repeat until nothing changes.
	for i := 0; i < 4; i++ {
		t := stripInvisible(s)
		if norm.NFKC.IsNormalString(t) && t == s {
			break
		}
		s = norm.NFKC.String(t)
	}
	return s
}

// stripInvisible removes characters that render as nothing.
func stripInvisible(s string) string {
	if strings.IndexFunc(s, isInvisible) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isInvisible(r) {
			return -1
		}
		return r
	}, s)
}

// isInvisible reports whether r has no visible form: Unicode format
// characters (Cf: U+200B–U+200F, U+2060–U+2064, U+FEFF, U+00AD, bidi
// controls, tags), variation selectors, the combining grapheme joiner and
// the Hangul fillers that fonts draw as blank.
func isInvisible(r rune) bool {
	switch {
	case r < 0xad:
		return false
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef,
		r == 0x34f, r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// decodeANSIC decodes the body of a $'...' string the way bash does:
// printf's escapes, and \? , \cX and octal without a leading 0.
// A decoded NUL ends the string, as it does in bash.
func decodeANSIC(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	out, _, _ := strings.Cut(unescape(s, true), "\x00")
	return out
}

// echoEscapes interprets the escapes of echo -e (bash) and of dash's
// echo, which applies them always: \c ends the output, \0NNN is octal.
func echoEscapes(s string) string { return unescape(s, false) }

// unescape decodes the backslash escapes of s as printf's format does,
// with those of $'...' (ansic: \?, \cX, octal without a leading 0) or
// else echo's \c, which ends the output.
func unescape(s string, ansic bool) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch c := s[i+1]; {
		case !ansic && c == 'c':
			return b.String()
		case ansic && c == '?':
			b.WriteByte(c)
			i++
		case ansic && c == 'c' && i+2 < len(s):
			b.WriteByte(s[i+2] & 0x1f)
			i += 2
		case ansic && c >= '0' && c <= '7':
			v, n := octPrefix(s[i+1:], 3)
			b.WriteByte(byte(v))
			i += n
		default:
			n, text := printfEscape(s[i:])
			b.WriteString(text)
			i += n - 1
		}
	}
	return b.String()
}

// printfEscape decodes one backslash escape at the start of s (which
// begins with '\') as printf's format does, and reports its length.
func printfEscape(s string) (int, string) {
	if len(s) < 2 {
		return len(s), s
	}
	c := s[1]
	// A letter escape: the character at the same place in the second string.
	if i := strings.IndexByte("abeEfnrtv\\\"'", c); i >= 0 {
		return 2, "\a\b\x1b\x1b\f\n\r\t\v\\\"'"[i : i+1]
	}
	switch c {
	case 'x', 'u', 'U':
		// \xHH is a byte, \uHHHH and \UHHHHHHHH a character: 2, 4 or 8 digits.
		v, n := hexPrefix(s[2:], 2<<strings.IndexByte("xuU", c))
		switch {
		case n == 0:
			return 2, s[:2]
		case c == 'x':
			return 2 + n, string([]byte{byte(v)})
		}
		return 2 + n, string(rune(v))
	case '0':
		v, n := octPrefix(s[2:], 3)
		return 2 + n, string([]byte{byte(v)})
	case '1', '2', '3', '4', '5', '6', '7':
		v, n := octPrefix(s[1:], 3)
		return 1 + n, string([]byte{byte(v)})
	}
	return 2, s[:2]
}

// hexPrefix reads up to max hexadecimal digits at the start of s: their
// value (U+FFFD past the last code point) and how many there are.
func hexPrefix(s string, max int) (uint32, int) {
	v, n := digitsPrefix(s, 16, max)
	if v > unicode.MaxRune {
		v = unicode.ReplacementChar
	}
	return v, n
}

// octPrefix reads up to max octal digits at the start of s: their value
// as a byte and how many there are.
func octPrefix(s string, max int) (uint32, int) {
	v, n := digitsPrefix(s, 8, max)
	return v & 0xff, n
}

// digitsPrefix reads up to max digits of base 8 or 16 at the start of s.
func digitsPrefix(s string, base, max int) (uint32, int) {
	digits := "01234567"
	if base == 16 {
		digits = "0123456789abcdefABCDEF"
	}
	n := 0
	for n < len(s) && n < max && strings.IndexByte(digits, s[n]) >= 0 {
		n++
	}
	v, _ := strconv.ParseUint(s[:n], base, 32)
	return uint32(v), n
}
