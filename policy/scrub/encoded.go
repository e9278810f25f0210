package scrub

import (
	"encoding/base64"
	"encoding/hex"
	"sort"
	"strings"
	"unicode/utf8"
)

// Encoded and wrapped text. A tool can print a secret so that no escape
// decoder sees it: split over lines (fold -w 10, a wrapped terminal),
// base64 of a document holding it at any byte offset (base64 .env, wrapped
// at 76 columns), hex (xxd -p, wrapped at 60). A reader (or the agent)
// joins and decodes that without being asked, so the scrubber does too:
//
//   - the known values are searched again across each line break that
//     falls between printing characters;
//   - the rules run again on a token folded over lines;
//   - each run of base64 or hex (at least minEncodedRun characters, lines
//     joined) is decoded at every alignment; when that gives text, the
//     text is searched with the rules and the known values, and what is
//     found there redacts the encoded characters it came from.
//
// Binary that decodes to bytes that are not text (images, archives) is
// skipped after a short sample, and the decoding done for one text is
// bounded (maxDecodedPerText).

const (
	minEncodedRun     = 16      // shorter base64 or hex runs are words, not encodings
	maxEncodedRun     = 1 << 18 // a longer run is decoded only in its first part
	maxDecodedPerText = 1 << 20 // decoding budget for one text
	textSample        = 96      // decoded bytes inspected before a run is decoded whole
)

// joined is text with its line breaks removed; removed lists, in order,
// where the removed bytes were in the original.
type joined struct {
	text    string
	removed []int32
}

func joinBreaks(text string) joined {
	if strings.IndexByte(text, '\n') < 0 && strings.IndexByte(text, '\r') < 0 && strings.IndexByte(text, '\\') < 0 {
		return joined{text: text}
	}
	var b strings.Builder
	b.Grow(len(text))
	var removed []int32
	last := 0
	for i := 0; i < len(text); i++ {
		if n := gapLen(text, i); n > 0 {
			b.WriteString(text[last:i])
			for k := i; k < i+n; k++ {
				removed = append(removed, int32(k))
			}
			i += n - 1
			last = i + 1
		}
	}
	b.WriteString(text[last:])
	return joined{b.String(), removed}
}

// orig is where byte k of the joined text is in the original.
func (j *joined) orig(k int) int {
	// removed[i]-i is the joined offset before which the i-th removal lies.
	return k + sort.Search(len(j.removed), func(i int) bool { return int(j.removed[i])-i > k })
}

// span maps [a, b) of the joined text to the original.
func (j *joined) span(a, b int) (int, int) {
	if b <= a {
		o := j.orig(a)
		return o, o
	}
	return j.orig(a), j.orig(b-1) + 1
}

// encodedSpans finds secrets split over lines or inside base64 or hex. It
// works run by run on the text as written: a run of base64 or hex bytes
// goes on across a line break between two of them, and only a run that
// crosses breaks is copied to be joined.
func (s *Scrubber) encodedSpans(text string) []scrubSpan {
	var spans []scrubSpan
	if s.knownAC != nil {
		spans = s.foldedKnown(text, spans)
	}
	budget := decodeBudget{bytes: maxDecodedPerText, state: maxStatePerText}
	// Dumps and UTF-16 are read for calls with known values (dumps.go).
	dumps := s.knownAC != nil
	var streak dumpStreakState
	if dumps {
		spans = s.utf16Spans(text, &budget, spans)
	}
	for i := 0; i < len(text) && budget.bytes > 0; {
		if !isEncodedByte(text[i]) || text[i] == '=' {
			i++
			continue
		}
		k, breaks, nbreak := i, false, 0
	run:
		for k < len(text) {
			switch c := text[k]; {
			case c == '=':
				for k < len(text) && text[k] == '=' { // padding ends a run
					k++
				}
				break run
			case isEncodedByte(c):
				k++
			default:
				n := gapLen(text, k)
				if n == 0 || k+n >= len(text) || !isEncodedByte(text[k+n]) || text[k+n] == '=' {
					break run
				}
				k, breaks, nbreak = k+n, true, nbreak+n
			}
		}
		if dumps {
			if !maybeUnit(text, i, k) {
				streak.n = 0
			} else if streak.add(text, i, k, breaks) {
				spans, i = s.dumpSpans(text, &streak, &budget, spans)
				i = max(i, k)
				streak.done, streak.n = i, 0
				continue
			}
		}
		if k-i-nbreak < min(minEncodedRun, minSplitToken) {
			i = k // a word or two, not an encoding or a key
			continue
		}
		j := joined{text: text[i:k]}
		if breaks {
			j = joinBreaks(text[i:k])
			spans = s.splitTokenSpans(text, i, k, &j, spans)
		}
		if len(j.text) >= minEncodedRun {
			aligns := 1
			if breaks {
				aligns = 4 // a line glued in front may shift the groups
			}
			run := j.text[:min(len(j.text), maxEncodedRun)]
			for _, f := range s.decodedFinds(run, aligns, &budget) {
				a, b := j.span(f.a, f.b)
				spans = append(spans, scrubSpan{i + a, i + b, -1, f.kind})
			}
		}
		i = k
	}
	return spans
}

// gapLen is the length of the gap at text[k] that a reader closes when
// joining a token, or 0: a line break (\n, \r\n or \r), one written as a
// JSON or C string escapes it (the two characters \n, \r\n or \r), or the
// backslash JSON may write before a slash (\/). A tool's output reaches the
// scrubber as a JSON string, in which `base64 -w 76` is one line of escaped
// breaks.
func gapLen(text string, k int) int {
	switch {
	case text[k] == '\n':
		return 1
	case text[k] == '\r' && k+1 < len(text) && text[k+1] == '\n':
		return 2
	case text[k] == '\r':
		return 1
	case text[k] != '\\' || k+1 == len(text):
		return 0
	case text[k+1] == 'n':
		return 2
	case text[k+1] == '/':
		return 1 // the slash stays
	case text[k+1] == 'r' && strings.HasPrefix(text[k+2:], `\n`):
		return 4
	case text[k+1] == 'r':
		return 2
	}
	return 0
}

// foldedKnown finds known values folded over lines: around each break
// with printing characters on both sides, the run of printing characters
// (lines joined, at most a known value's length on each side) is searched
// for the known values. Prose breaks between short words cost little.
func (s *Scrubber) foldedKnown(text string, spans []scrubSpan) []scrubSpan {
	reach, shortest := s.knownAC.maxLen, s.knownAC.maxLen
	for _, l := range s.knownAC.lens {
		shortest = min(shortest, l)
	}
	var pos []int32
	// Raw breaks, then escaped ones (\n in a JSON string); a \r before
	// either belongs to the break.
	for _, br := range [...]struct{ nl, cr string }{{"\n", "\r"}, {`\n`, `\r`}} {
		for k := strings.Index(text, br.nl); k >= 0; {
			b0, k1 := k, k+len(br.nl)
			if strings.HasSuffix(text[:b0], br.cr) {
				b0 -= len(br.cr)
			}
			pos, spans = s.foldedAt(text, b0, k1, reach, shortest, pos, spans)
			n := strings.Index(text[k1:], br.nl)
			if n < 0 {
				break
			}
			k = k1 + n
		}
	}
	return spans
}

// foldedAt searches the printing characters around the break text[b0:k1]
// for known values, when there are some on both sides. Each break gets
// its own window (reach bounds it): a window stopped short of a later
// break must not hide it.
func (s *Scrubber) foldedAt(text string, b0, k1, reach, shortest int, pos []int32, spans []scrubSpan) ([]int32, []scrubSpan) {
	if b0 == 0 || k1 == len(text) || blank(text[b0-1]) || blank(text[k1]) {
		return pos, spans
	}
	lo := b0
	for lo > 0 && b0-lo < reach && !blank(text[lo-1]) {
		lo--
	}
	hi := k1
	for hi < len(text) && hi-k1 < reach {
		if n := gapLen(text, hi); n > 0 && hi+n < len(text) && !blank(text[hi+n]) {
			hi += n // folded again
			continue
		}
		if blank(text[hi]) {
			break
		}
		hi++
	}
	// Shorter than any known value: prose words around a break.
	if hi-lo-(k1-b0) < shortest {
		return pos, spans
	}
	return s.scanJoined(text, lo, hi, pos[:0], spans)
}

// scanJoined walks the known values' automaton over text[lo:hi] with its
// line breaks skipped, and keeps the matches that span one; pos (reused)
// holds the original offset of each byte walked.
func (s *Scrubber) scanJoined(text string, lo, hi int, pos []int32, spans []scrubSpan) ([]int32, []scrubSpan) {
	m := s.knownAC
	row := int32(0)
	for i := lo; i < hi; i++ {
		c := text[i]
		if n := gapLen(text, i); n > 0 {
			i += n - 1
			continue
		}
		pos = append(pos, int32(i))
		row = m.trans[row+int32(m.class[c])]
		if row < 0 {
			row = ^row
			for _, id := range m.out[row/m.nc] {
				n, l := len(pos), m.lens[id]
				if a, b := int(pos[n-l]), int(pos[n-1])+1; b-a != l {
					spans = append(spans, scrubSpan{a, b, -1, s.known[id]})
				}
			}
		}
	}
	return pos, spans
}

func blank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// splitTokenSpans runs the rules around the breaks that fall inside a token
// of run text[lo:hi] (a key folded over lines): with the rest of the line
// before and after it, as a key=value pair's name may stand there.
func (s *Scrubber) splitTokenSpans(text string, lo, hi int, j *joined, spans []scrubSpan) []scrubSpan {
	if len(j.text) < minSplitToken || len(j.text) >= maxSplitToken || !strings.ContainsAny(j.text, "0123456789") {
		// Too short to be a key, or words without a digit (keys nearly
		// always have one); an encoded blob is decoded instead.
		return spans
	}
	// The breaks that leave a good part of the token on each side: a word
	// glued to the end of a line (a hash, then "Author") does not.
	var inside []int
	for n, r := range j.removed {
		if b := int(r) - n; b >= minSplitPiece && len(j.text)-b >= minSplitPiece && (len(inside) == 0 || inside[len(inside)-1] != b) {
			inside = append(inside, b)
		}
	}
	if len(inside) == 0 {
		return spans
	}
	pre := lo
	for pre > 0 && lo-pre < splitMargin && text[pre-1] != '\n' && text[pre-1] != '\r' {
		pre--
	}
	post := hi
	for post < len(text) && post-hi < splitMargin && text[post] != '\n' && text[post] != '\r' {
		post++
	}
	w := text[pre:lo] + j.text + text[hi:post]
	off := lo - pre
	found, _ := s.find(w, false)
	for _, sp := range found {
		a, b := sp.start-off, sp.end-off
		// Only a finding across one of those breaks is one the lines hid;
		// others were seen in the text as written.
		n := sort.SearchInts(inside, a+1)
		if a < 0 || b > len(j.text) || n == len(inside) || inside[n] >= b {
			continue
		}
		a, b = j.span(a, b)
		sp.start, sp.end = lo+a, lo+b
		spans = append(spans, sp)
	}
	return spans
}

const (
	minSplitToken = 20  // a token this long across a line break was folded
	maxSplitToken = 512 // a longer one is an encoded blob, decoded instead
	minSplitPiece = 4   // characters of the token on each side of the break
	splitMargin   = 64  // text of the line around it searched too
)

func isEncodedByte(c byte) bool { return encodedByte[c] }

// encodedByte marks the bytes of base64 (both alphabets, padding) and hex.
var encodedByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = isBase64Byte(byte(c)) || c == '-' || c == '_'
	}
	return t
}()

// asciiBase64 reports whether a run aligned at its start could be base64 of
// ASCII text: the first character of every group encodes a byte below 0x80
// (A-Z, a-f). It rejects hashes and random data before anything is decoded.
func asciiBase64(r string) bool {
	for i := 0; i < len(r) && i < textSample; i += 4 {
		if c := r[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// asciiHex is the same for hex: every byte's high digit is 2 to 7 (or 0 for
// white space).
func asciiHex(r string) bool {
	for i := 0; i+1 < len(r) && i < textSample; i += 2 {
		if c := r[i]; c < '0' || c > '7' || c == '1' {
			return false
		}
	}
	return true
}

// decodedFinds decodes a run as hex or as base64 (at the first aligns
// alignments: text glued from other lines may precede it) and returns, in run offsets, the encoded characters
// that carry what the rules or the known values find in the decoded text;
// kind holds the marker.
func (s *Scrubber) decodedFinds(run string, aligns int, budget *decodeBudget) []found {
	var out []found
	if isHexRun(run) {
		for off := 0; off < 2; off++ {
			r := run[off:]
			r = r[:len(r)/2*2]
			if f := s.inflated(r, nil, off, len(run), budget); f != nil {
				out = append(out, f...)
				continue
			}
			if !asciiHex(r) || !textLike(r[:min(len(r), 2*textSample)], hexDecode) || budget.bytes <= 0 {
				continue
			}
			dec, err := hex.DecodeString(r)
			if err != nil {
				continue
			}
			budget.bytes -= len(dec)
			for _, sp := range s.decodedSpans(string(dec)) {
				out = append(out, found{a: off + 2*sp.start, b: off + 2*sp.end, kind: sp.marker})
			}
		}
		return out
	}
	if f, ok := s.base32Finds(run, aligns, budget); ok {
		return f
	}
	// One alphabet: URL-safe when the run has - or _, standard otherwise
	// (the two agree on every other character).
	enc := base64.RawStdEncoding
	if strings.IndexByte(run, '-') >= 0 || strings.IndexByte(run, '_') >= 0 {
		if strings.IndexByte(run, '+') >= 0 || strings.IndexByte(run, '/') >= 0 {
			return nil
		}
		enc = base64.RawURLEncoding
	}
	trimmed := strings.TrimRight(run, "=")
	for off := 0; off < aligns; off++ {
		r := trimmed[off:]
		if len(r)%4 == 1 { // not a whole byte
			r = r[:len(r)-1]
		}
		if len(r) < minEncodedRun || budget.bytes <= 0 {
			break
		}
		if f := s.inflated(r, enc, off, len(run), budget); f != nil {
			out = append(out, f...)
			break
		}
		if !asciiBase64(r) || !textLike(r[:min(len(r), textSample/3*4)], enc.DecodeString) {
			continue
		}
		dec, err := enc.DecodeString(r)
		if err != nil {
			continue
		}
		budget.bytes -= len(dec)
		for _, sp := range s.decodedSpans(string(dec)) {
			a := off + sp.start/3*4
			b := min(off+(sp.end+2)/3*4, len(run))
			out = append(out, found{a: a, b: b, kind: sp.marker})
		}
		break
	}
	return out
}

// decodedSpans runs the rules and the known values over decoded text.
func (s *Scrubber) decodedSpans(text string) []scrubSpan {
	spans, _ := s.find(text, false)
	return s.reversedKnown(text, spans)
}

func isHexRun(run string) bool {
	for i := 0; i < len(run); i++ {
		if !isHex(run[i]) {
			return false
		}
	}
	return true
}

func hexDecode(p string) ([]byte, error) { return hex.DecodeString(p[:len(p)/2*2]) }

// textLike reports whether a sample decodes to text: UTF-8 (a rune cut
// at the end aside) of printable characters and common white space, at
// least 9 in 10. Random bytes (images, archives, hashes) are not.
func textLike(sample string, decode func(string) ([]byte, error)) bool {
	b, err := decode(sample[:len(sample)/4*4])
	if err != nil || len(b) < 8 {
		return false
	}
	valid := false
	for cut := 0; cut < 4 && cut < len(b) && !valid; cut++ {
		valid = utf8.Valid(b[:len(b)-cut]) // the sample may end inside a rune
	}
	if !valid {
		return false
	}
	good, n := 0, 0
	for _, r := range string(b) {
		n++
		if r >= 0x20 && r != 0x7f && r != utf8.RuneError || r == '\n' || r == '\r' || r == '\t' {
			good++
		}
	}
	return good*10 >= n*9
}
