package scrub

import "strings"

// UTF-16. `iconv -t UTF-16` (and PowerShell, and Windows tools) write
// ASCII text with a NUL byte beside every character. Raw, the NULs are
// the gap between one-character units that the dump reader already reads
// (dumps.go). Inside a JSON string, as the daemon scrubs a tool's output,
// each NUL is the escape \u0000, which makes every character part of a
// longer run; those runs are read here: the text around a run of \u0000
// escapes is unescaped and its NULs dropped, and the characters left are
// searched like other decoded text.

const jsonNUL = `\u0000`

// maxUTF16Unit is how far apart two \u0000 escapes of one text are: a
// character or an escape (\n, \", \u00e9) between them.
const maxUTF16Unit = 6

// utf16Spans adds what it finds in JSON-escaped UTF-16 runs of text.
func (s *Scrubber) utf16Spans(text string, budget *decodeBudget, spans []scrubSpan) []scrubSpan {
	for i := strings.Index(text, jsonNUL); i >= 0 && budget.bytes > 0; {
		end, n := i+len(jsonNUL), 1
		for end < len(text) {
			w := text[end:min(len(text), end+maxUTF16Unit+len(jsonNUL))]
			j := strings.Index(w, jsonNUL)
			if j < 0 {
				break
			}
			end += j + len(jsonNUL)
			n++
		}
		lo, hi := max(0, i-maxUTF16Unit), min(len(text), end+maxUTF16Unit)
		if n >= minKnownLen {
			spans = s.utf16Run(text, lo, hi, budget, spans)
		}
		j := strings.Index(text[end:], jsonNUL)
		if j < 0 {
			break
		}
		i = end + j
	}
	return spans
}

// utf16Run searches text[lo:hi] unescaped, without its NULs.
func (s *Scrubber) utf16Run(text string, lo, hi int, budget *decodeBudget, spans []scrubSpan) []scrubSpan {
	dec, src, ok := unescapeOnce(text[lo:hi])
	if !ok {
		return spans
	}
	v := dumpView{text: dec, u: &unescaped{dec, src}, lo: lo}
	d := dumpReader{s: s, v: &v, budget: budget, spans: spans}
	for p := 0; p < len(dec); p++ {
		if dec[p] != 0 {
			d.toks = append(d.toks, dumpTok{a: int32(p), b: int32(p + 1), c: dec[p]})
		}
	}
	d.searchChars()
	return d.spans
}
