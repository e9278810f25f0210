// Package termsafe makes text someone else wrote safe to show a person:
// on a terminal, in a page, in a chat message. Agent-written text (a
// tool's description, an argument, a log line) may hold what a terminal
// or a browser obeys instead of showing: escape sequences (CSI, OSC, OSC 8
// links, title sets), C1 controls, a bare carriage return or backspace
// that overwrites what came before, bidirectional overrides that show
// text in another order than it runs, and invisible characters. Every
// such character is shown as an escape (\u202e, \x1b) instead, so the
// person sees what is there; everything else passes unchanged.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Unsafe reports whether r, shown as is, may do something other than
// show itself: a C0 or C1 control or DEL, a format character (Unicode
// category Cf: bidirectional controls U+202A–U+202E and U+2066–U+2069,
// marks, zero-width characters, the BOM, tag characters), a line or
// paragraph separator, or a noncharacter. Invalid UTF-8 is written as
// \xNN (there is no character to name). Tab and newline count as unsafe
// too; Text keeps them.
func Unsafe(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r < 0x80:
		return false
	case r <= 0x9f: // C1 controls
		return true
	case r == utf8.RuneError:
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) ||
		r&0xfffe == 0xfffe || r >= 0xfdd0 && r <= 0xfdef
}

// Line returns s with every unsafe character, tab and newline among them,
// written as an escape: safe for one line of a table or a key/value
// block, where a newline would start a forged row.
func Line(s string) string { return escape(s, false) }

// Text returns s with every unsafe character but tab and newline written
// as an escape: safe for a block of several lines.
func Text(s string) string { return escape(s, true) }

// Needs reports whether Line would change s.
func Needs(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if Unsafe(r) {
			return true
		}
		i += n
	}
	return false
}

func escape(s string, lines bool) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if Unsafe(r) && !(lines && (r == '\n' || r == '\t')) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !Unsafe(r) || lines && (r == '\n' || r == '\t'):
			b.WriteString(s[i : i+n])
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		default:
			b.WriteString(Escape(r))
		}
		i += n
	}
	return b.String()
}

// Escape is how r is written in Line and Text, in a form that means r
// inside a JSON string too: \t, \n, \r and \b by name, every other
// character as \uXXXX (a surrogate pair above U+FFFF). So a JSON text
// passed through Text is the same JSON value.
func Escape(r rune) string {
	switch {
	case r == '\t':
		return `\t`
	case r == '\n':
		return `\n`
	case r == '\r':
		return `\r`
	case r == '\b':
		return `\b`
	case r > 0xffff:
		r1, r2 := utf16.EncodeRune(r)
		return fmt.Sprintf(`\u%04x\u%04x`, r1, r2)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// JSON returns a JSON text with every unsafe character written as a JSON
// escape: the same JSON value, safe on a terminal. A valid JSON text holds
// raw characters only inside strings, where the escape means the same,
// and tab and newline outside them (indentation), which are kept.
func JSON(b []byte) []byte {
	s := string(b)
	if t := Text(s); t != s {
		return []byte(t)
	}
	return b
}
