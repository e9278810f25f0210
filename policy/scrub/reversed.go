package scrub

import (
	"slices"
	"strings"
)

// Reversed text. `rev` prints a value backwards in one command, and
// `rev | base64` (or xxd, or a dump) hides it from every decoder that
// reads forwards. The raw reversed value is one more literal in a call's
// automaton (cheap: its size grows by a tenth); decoded text (base64,
// base32, hex, dumps, UTF-16), which is rare, is searched backwards too
// rather than adding the reversed value in every encoding.

// reversed is v's bytes in reverse order. A value is reversed by the byte
// (rev reverses runes, which is the same for ASCII values).
func reversed(v string) string {
	b := []byte(v)
	slices.Reverse(b)
	return string(b)
}

// reversedKnown adds to spans the known values found in text read
// backwards, in text's offsets.
func (s *Scrubber) reversedKnown(text string, spans []scrubSpan) []scrubSpan {
	if s.knownAC == nil || len(text) < minKnownLen {
		return spans
	}
	r, n := reversed(text), len(text)
	s.knownAC.scan(r, func(end int, id int32) {
		spans = append(spans, scrubSpan{n - end, n - end + s.knownAC.lens[id], -1, s.known[id]})
	})
	return spans
}

// reversedJSON is reversed(v) as a JSON string holds it, or "" when that
// is reversed(v) itself (no quote, backslash, HTML or control byte).
func reversedJSON(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || strings.IndexByte(`"\<>&`, v[i]) >= 0 {
			return jsonString(reversed(v), false)
		}
	}
	return ""
}
