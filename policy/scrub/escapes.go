package scrub

// Escaped text. A client decodes some escapes without being asked: a
// JSON parser turns "\u005f" into "_", a URL parser "%5F", an HTML
// renderer "&#95;". A secret written with any subset of its bytes escaped
// that way reaches the reader as the secret, so the scrubber also looks
// at the decoded text and maps what it finds there back to the escapes it
// came from. Listing escaped forms instead cannot work: a value of n bytes
// has 2^n mixed spellings per escape kind.
//
// Decoded are: JSON string escapes (\uXXXX in either case, surrogate
// pairs, \/ \" \\ \b \f \n \r \t), URL percent escapes (%XX), and HTML
// character references (&#NN; &#xHH; &amp; &lt; &gt; &quot; &apos;).
// '+' is not read as a space: outside a query string it is a plus.
// Layers are undone in turn (a JSON-escaped percent escape), up to
// maxUnescapeLayers.

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

const maxUnescapeLayers = 3

// escapeTriggers are the literals that tell the keyword pass that text
// may hold an escape; text without one is never decoded.
var escapeTriggers = []string{`\u`, `\/`, "%", "&#", "&amp;", "&lt;", "&gt;", "&quot;", "&apos;"}

// escapeAt reports whether an escape trigger ending at end begins an
// escape; "%" alone needs two hex digits after it.
func escapeAt(text string, start, end int) bool {
	if text[start] != '%' {
		return true
	}
	return end+1 < len(text) && isHex(text[end]) && isHex(text[end+1])
}

// unescaped is text with its escapes decoded; src[i] is where the escape
// that produced byte i begins in the original, src[len] is its length.
type unescaped struct {
	text string
	src  []int32
}

// span maps [a, b) of the decoded text to the original, widened to whole
// escapes.
func (u *unescaped) span(a, b int) (int, int) {
	e := b
	for e < len(u.text) && u.src[e] == u.src[b-1] {
		e++
	}
	return int(u.src[a]), int(u.src[e])
}

// unescape decodes every layer of escapes in text; ok is false when there
// was nothing to decode.
func unescape(text string) (u unescaped, ok bool) {
	cur, src, changed := unescapeOnce(text)
	if !changed {
		return u, false
	}
	for range maxUnescapeLayers - 1 {
		next, s2, ch := unescapeOnce(cur)
		if !ch {
			break
		}
		for i, p := range s2 {
			s2[i] = src[p]
		}
		cur, src = next, s2
	}
	return unescaped{cur, src}, true
}

// unescapeOnce decodes one layer of escapes.
func unescapeOnce(text string) (string, []int32, bool) {
	var (
		b   []byte
		src []int32
	)
	last := 0 // text[last:i] is copied as is once an escape is seen
	flush := func(i int) {
		if b == nil {
			b = make([]byte, 0, len(text))
			src = make([]int32, 0, len(text)+1)
		}
		for j := last; j < i; j++ {
			b = append(b, text[j])
			src = append(src, int32(j))
		}
	}
	for i := 0; i < len(text); {
		j := strings.IndexAny(text[i:], `\%&`)
		if j < 0 {
			break
		}
		i += j
		r, n := decodeEscape(text, i)
		if n == 0 {
			i++
			continue
		}
		flush(i)
		if text[i] == '%' {
			// %XX stands for one byte, not a rune.
			b = append(b, byte(r))
			src = append(src, int32(i))
		} else {
			var enc [utf8.UTFMax]byte
			for _, c := range enc[:utf8.EncodeRune(enc[:], r)] {
				b = append(b, c)
				src = append(src, int32(i))
			}
		}
		i += n
		last = i
	}
	if b == nil {
		return text, nil, false
	}
	flush(len(text))
	src = append(src, int32(len(text)))
	return string(b), src, true
}

// decodeEscape decodes the escape at text[i], returning its value and
// length, or n == 0 when none begins there.
func decodeEscape(text string, i int) (r rune, n int) {
	switch text[i] {
	case '\\':
		if i+1 >= len(text) {
			return 0, 0
		}
		switch c := text[i+1]; c {
		case 'u':
			r1, ok := hex4(text, i+2)
			if !ok {
				return 0, 0
			}
			if utf16.IsSurrogate(r1) {
				if r2, ok := hex4(text, i+8); ok && text[i+6] == '\\' && text[i+7] == 'u' {
					if r := utf16.DecodeRune(r1, r2); r != utf8.RuneError {
						return r, 12
					}
				}
				return utf8.RuneError, 6
			}
			return r1, 6
		case '/', '"', '\\':
			return rune(c), 2
		case 'b':
			return '\b', 2
		case 'f':
			return '\f', 2
		case 'n':
			return '\n', 2
		case 'r':
			return '\r', 2
		case 't':
			return '\t', 2
		}
	case '%':
		if i+2 < len(text) && isHex(text[i+1]) && isHex(text[i+2]) {
			return rune(unhex(text[i+1])<<4 | unhex(text[i+2])), 3
		}
	case '&':
		return htmlEntity(text, i)
	}
	return 0, 0
}

func htmlEntity(text string, i int) (rune, int) {
	rest := text[i+1:]
	if strings.HasPrefix(rest, "#") {
		j, base := 1, 10
		if len(rest) > 1 && rest[1]|0x20 == 'x' {
			j, base = 2, 16
		}
		v, k := 0, j
		for ; k < len(rest) && k-j < 7; k++ {
			d := rest[k]
			switch {
			case '0' <= d && d <= '9':
				v = v*base + int(d-'0')
			case base == 16 && isHex(d):
				v = v*base + int(unhex(d))
			default:
				goto done
			}
		}
	done:
		if k == j || k >= len(rest) || rest[k] != ';' || v > utf8.MaxRune {
			return 0, 0
		}
		if !utf8.ValidRune(rune(v)) {
			return utf8.RuneError, k + 2
		}
		return rune(v), k + 2
	}
	for _, e := range [...]struct {
		name string
		r    rune
	}{{"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}} {
		if strings.HasPrefix(rest, e.name) {
			return e.r, len(e.name) + 1
		}
	}
	return 0, 0
}

func hex4(text string, i int) (rune, bool) {
	if i+4 > len(text) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(text[i : i+4]) {
		if !isHex(c) {
			return 0, false
		}
		r = r<<4 | rune(unhex(c))
	}
	return r, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}
