package scrub

import (
	"sort"
	"strings"
)

// Dumps and separated bytes. A tool can print a value one byte or one
// character at a time, as no base64 or hex run holds it:
//
//	xxd, xxd -g1 -c N     00000000: 5a6b 3370 5f4b ...  Zk3p_Known-Secre
//	hexdump -C [-v]       00000000  5a 6b 33 70 ...  |Zk3p_Known-Secre|
//	hexdump, od -x        0000000 6b5a 7033 ...      (16-bit words, little-endian)
//	od -An -tx1, -t o1    5a 6b 33 70 ... / 132 153 063 160 ...
//	od -t d1, -t u1       90  107   51  112 ...
//	od, od -c             0000000 065532 070063 ... / 0000000   Z   k   3   p
//	inline                5a:6b:33, 0x5a, 0x6b, \x5a\x6b, [90,107,51], Z k 3 p, "Z","k"
//
// The encoded-run walk (encodedSpans) sees every run of letters and
// digits; a streak of dumpStreak short runs that each could be one unit
// (a character, a number, 0x or \x and hex digits) with the same gap
// between them starts a dump. Its lines (joined, offsets dropped) are
// decoded in every reading the units allow (hex bytes, hex words either
// way round, octal, decimal, characters) and the decoded bytes are
// searched like other decoded text, backwards too. A finding redacts the
// units that carry it, line by line, and the text column (xxd, hexdump -C)
// of each of those lines. Ordinary hexdumps decode to bytes that hold no
// finding and stay as they are; prose rarely has four short hex-digit
// words in a row, and a word that neither starts nor ends like a unit
// costs two table lookups.
//
// Dumps (and UTF-16, utf16.go) are read for calls with known values: it
// is their values a tool is given to hide, and a call without any keeps
// the walk as it was. What the rules find in a dump's bytes is redacted
// too, in those calls.
//
// Inside a JSON string (a tool's output as the daemon scrubs it) a dump's
// lines end in \n escapes and its quotes and backslashes are escaped: the
// dump's text is unescaped (one layer) before it is read.

const (
	dumpStreak      = 4       // units in a row that start a dump
	maxUnitRun      = 16      // longest run read as one unit (xxd -g8)
	maxUnitGap      = 8       // longest gap between two units (`", "` escaped)
	maxDumpRegion   = 1 << 16 // text read as one dump at a time
	dumpFirstRegion = 1 << 10 // text read first after a dump's start
	maxDumpBack     = 256     // text read before a dump's start
	dumpOverlap     = 512     // a dump cut there is read again from this far back
)

// dumpStreakState follows the runs of encodedSpans' walk for a dump's
// start.
type dumpStreakState struct {
	n          int // units in the streak so far
	start      int // where the streak's first unit is
	last       int // where the last unit is
	prevEnd    int // end of the last unit
	gapA, gapB int // the streak's gap between two units
	digits     int // characters in the streak's units
	// chars counts the streak's last units that are one character each,
	// from charStart on.
	chars, charStart int
	done             int // text before this was read as a dump already
}

// add records the run text[i:k] (breaks: it crosses a line break) and
// reports whether a dump starts at t.start.
func (t *dumpStreakState) add(text string, i, k int, breaks bool) bool {
	if breaks || k-i > maxUnitRun+2 || !unitLike(text, i, k) {
		t.n = 0
		return false
	}
	gap := i - t.prevEnd
	switch {
	case t.n == 0 || gap < 1 || gap > maxUnitGap:
		t.n, t.start, t.digits, t.chars = 1, i, 0, 0
	case t.n == 1 || sameGap(text[t.prevEnd:i], text[t.gapA:t.gapB], k-i == 1):
		t.n++
		t.gapA, t.gapB = t.prevEnd, i
	default: // a new gap: a streak of the last unit and this one
		t.n, t.start, t.digits = 2, t.last, t.prevEnd-t.last
		t.gapA, t.gapB = t.prevEnd, i
		if t.chars > 0 {
			t.chars, t.charStart = 1, t.last
		}
	}
	t.digits += k - i
	switch {
	case k-i != 1:
		t.chars = 0
	case t.chars == 0:
		t.chars, t.charStart = 1, i
	default:
		t.chars++
	}
	t.prevEnd, t.last = k, i
	// Four units, or two long ones (xxd -g4, -g8).
	return (t.n >= dumpStreak || t.n >= 2 && t.digits >= 16) && t.start >= t.done
}

// maybeUnit is unitLike's first test, small enough to inline in the
// walk: a word that does not start and end like a unit costs two table
// lookups.
func maybeUnit(text string, i, k int) bool {
	return k-i == 1 || k-i <= maxUnitRun+2 && unitEdge[text[i]]&1 != 0 && unitEdge[text[k-1]]&2 != 0
}

// unitEdge marks the bytes a unit may start with (1: hex digits, x) and
// end with (2: hex digits).
var unitEdge = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		if isHex(byte(c)) {
			t[c] = 3
		}
	}
	t['x'], t['X'] = 1, 1
	return t
}()

// sameGap: two gaps between units are the same, or both blanks (od pads
// numbers to a width).
func sameGap(a, b string, char bool) bool {
	return a == b || strings.Trim(a, " ") == "" && strings.Trim(b, " ") == "" ||
		char && odGap(a) && odGap(b)
}

// odGap: a gap od -c leaves between two letters or digits, with fields of
// punctuation or escapes (\n) between them, starts with two blanks.
func odGap(g string) bool { return strings.HasPrefix(g, "  ") }

// unitLike reports whether the run text[i:k] may be one unit of a dump: a
// single character, or hex digits after an optional 0x (or an x after a
// backslash). Most words fail at their first or last letter.
func unitLike(text string, i, k int) bool {
	if k-i == 1 {
		return true
	}
	if !isHex(text[k-1]) {
		return false
	}
	switch {
	case text[i] == 'x' && i > 0 && text[i-1] == '\\':
		i++
	case text[i] == '0' && k-i > 2 && text[i+1]|0x20 == 'x':
		i += 2
	}
	if k-i > maxUnitRun {
		return false
	}
	for ; i < k; i++ {
		if !isHex(text[i]) {
			return false
		}
	}
	return true
}

// dumpView is a dump's text as it is read: the original, or its JSON
// escapes undone (src maps back, as unescaped does).
type dumpView struct {
	text string
	u    *unescaped // nil: text is the original at offset lo
	lo   int
}

// span maps view[a:b] to the original, widened to whole escapes.
func (v *dumpView) span(a, b int) (int, int) {
	if v.u == nil {
		return v.lo + a, v.lo + b
	}
	a, b = v.u.span(a, b)
	return v.lo + a, v.lo + b
}

// orig is the original offset of view offset a.
func (v *dumpView) orig(a int) int {
	if v.u == nil {
		return v.lo + a
	}
	return v.lo + int(v.u.src[a])
}

// toView is the view offset of the byte original offset p is part of
// (an escape's first decoded byte), or -1.
func (v *dumpView) toView(p int) int {
	p -= v.lo
	if v.u == nil {
		return p
	}
	n := len(v.u.text)
	i := sort.Search(n, func(i int) bool { return int(v.u.src[i]) > p }) - 1
	if i < 0 {
		return -1
	}
	for i > 0 && v.u.src[i-1] == v.u.src[i] {
		i-- // the first byte of a multi-byte rune
	}
	return i
}

// newDumpView reads text[lo:hi]: unescaped when it is the inside of a JSON
// string (escaped line breaks, no raw ones, or escaped backslashes and
// quotes).
func newDumpView(text string, lo, hi int) dumpView {
	r := text[lo:hi]
	if strings.IndexByte(r, '\\') < 0 || strings.IndexByte(r, '\n') >= 0 {
		return dumpView{text: r, lo: lo}
	}
	if !strings.Contains(r, `\n`) && !strings.Contains(r, `\\`) && !strings.Contains(r, `\"`) {
		return dumpView{text: r, lo: lo}
	}
	dec, src, ok := unescapeOnce(r)
	if !ok {
		return dumpView{text: r, lo: lo}
	}
	return dumpView{text: dec, u: &unescaped{dec, src}, lo: lo}
}

// lineStartBefore is where the line holding text[at] begins: after a line
// break, raw or escaped (\n), at most back bytes before at.
func lineStartBefore(text string, at, back int) int {
	for j := at; j > 0 && at-j < back; j-- {
		if text[j-1] == '\n' || text[j-1] == 'n' && j >= 2 && text[j-2] == '\\' {
			return j
		}
	}
	return max(0, at-back)
}

// dumpSpans reads the dump whose streak starts at text[at] and adds what
// it finds to spans; next is where the walk goes on (the dump's end). The
// text read starts at most maxDumpBack before the streak and ends
// dumpFirstRegion after it, four times farther each time the dump runs
// to its end (up to maxDumpRegion): a trigger that reads nothing costs
// little wherever it is.
func (s *Scrubber) dumpSpans(text string, t *dumpStreakState, budget *decodeBudget, spans []scrubSpan) ([]scrubSpan, int) {
	at := t.start
	lo := lineStartBefore(text, at, maxDumpBack)
	spent := budget.bytes
	for size := dumpFirstRegion; ; size *= 4 {
		hi := min(len(text), at+size)
		if hi < len(text) {
			if j := lineStartBefore(text, hi, size/2); j > at {
				hi = j
			}
		}
		budget.bytes = spent
		v := newDumpView(text, lo, hi)
		d := dumpReader{s: s, v: &v, budget: budget, spans: spans}
		end := 0
		if va := v.toView(at); va >= 0 {
			end = d.numbers(va)
		}
		if t.chars >= 2 {
			gap := text[t.gapA:t.gapB]
			if v.u != nil {
				if g, _, ok := unescapeOnce(gap); ok {
					gap = g
				}
			}
			if vc := v.toView(t.charStart); vc >= 0 {
				end = max(end, d.chars(vc, gap))
			}
		}
		if end < len(v.text) {
			return d.spans, max(v.orig(end), at+1)
		}
		if hi == len(text) {
			return d.spans, hi
		}
		if size*4 > maxDumpRegion { // read again from a little before the cut
			return d.spans, max(lineStartBefore(text, hi-dumpOverlap, dumpOverlap), at+1)
		}
	}
}

// dumpReader decodes one dump's view.
type dumpReader struct {
	s      *Scrubber
	v      *dumpView
	budget *decodeBudget
	spans  []scrubSpan
	// toks are the units of the current reading, in order.
	toks []dumpTok
}

// dumpTok is one unit at view[a:b]: a number's digits at view[da:db] or
// a character c, on the line starting at line, whose text column (xxd's,
// hexdump -C's) is at view[colA:colB]. It holds no pointer: a dump of a
// megabyte has a quarter of a million.
type dumpTok struct {
	a, b, da, db int32
	line         int32
	colA, colB   int32
	c            byte
}

// numbers reads the view's lines from view offset va (the first unit) as
// numeric dump lines until a line has no unit, decodes the units in each
// reading and returns the view offset where the dump ends.
func (d *dumpReader) numbers(va int) int {
	text := d.v.text
	end, width := 0, 0
	d.toks = d.toks[:0]
	if va > 0 && text[va-1] == '\\' {
		va-- // \x5a
	}
	for la := va; la < len(text); {
		lb := strings.IndexByte(text[la:], '\n')
		if lb < 0 {
			lb = len(text)
		} else {
			lb += la
		}
		line := strings.TrimSuffix(text[la:lb], "\r")
		n := len(d.toks)
		width = d.numberLine(line, la, width)
		// A dump's last line may hold one number; its first needs two
		// (od -c's offset alone is not a dump of numbers).
		if len(d.toks) == n || n == 0 && len(d.toks) < 2 {
			d.toks = d.toks[:n]
			break
		}
		end = lb
		la = lb + 1
	}
	d.decodeNumbers()
	return end
}

// numberLine appends the units of one line at view offset off: after an
// offset (six or more digits at the line's start, then ':' or a blank),
// numbers separated by blanks and punctuation, up to a text column (what
// follows the last double blank, when it is not all digits) or the first
// word that is not a number. width is the units' digit count so far (0:
// none yet); a unit longer than it and than a decimal byte ends the line.
func (d *dumpReader) numberLine(line string, off, width int) int {
	p := 0
	if q := hexPrefix(line); q >= 6 && q < len(line) && isOffsetEnd(line[q:], q) {
		p = q + 1
	}
	stop, colA, colB := len(line), 0, 0
	if j := strings.LastIndex(line, "  "); j > p {
		if rest := strings.TrimSpace(line[j:]); rest != "" && !allNumberish(rest) {
			stop, colA, colB = j, off+j, off+len(line)
		}
	}
	for p < stop {
		for p < stop && isDumpSep(line, p) {
			p++
		}
		if p >= stop {
			break
		}
		q := p
		for q < stop && isAlnum(line[q]) {
			q++
		}
		a := p
		switch {
		case q-p > 2 && line[p] == '0' && line[p+1]|0x20 == 'x':
			a += 2
		case q-p > 1 && line[p] == 'x' && p > 0 && line[p-1] == '\\':
			a++
		}
		digits := line[a:q]
		if digits == "" || len(digits) > maxUnitRun || hexPrefix(digits) != len(digits) ||
			width > 0 && len(digits) > max(width, 3) {
			break
		}
		if width == 0 {
			width = len(digits)
		}
		d.toks = append(d.toks, dumpTok{a: int32(off + p), b: int32(off + q), da: int32(off + a), db: int32(off + q),
			line: int32(off), colA: int32(colA), colB: int32(colB)})
		p = q
	}
	return width
}

// isOffsetEnd reports whether what follows q digits at a line's start
// makes them a dump's offset: xxd's colon, hexdump -C's two blanks, or
// od's and hexdump's seven digits and a blank. Eight digits and one blank
// are a unit (xxd -g4 without offsets).
func isOffsetEnd(rest string, q int) bool {
	return rest[0] == ':' || strings.HasPrefix(rest, "  ") || q == 7 && rest[0] == ' '
}

// isDumpSep: what stands between a dump's numbers.
func isDumpSep(line string, p int) bool {
	switch line[p] {
	case ' ', '\t', ',', ';', ':', '[', ']', '(', ')', '{', '}', '"', '\'':
		return true
	case '\\':
		return p+1 < len(line) && line[p+1] == 'x'
	}
	return false
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z'
}

// hexPrefix is the number of hex digits s starts with.
func hexPrefix(s string) int {
	i := 0
	for i < len(s) && isHex(s[i]) {
		i++
	}
	return i
}

func allNumberish(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) && s[i] != ' ' {
			return false
		}
	}
	return true
}

// A reading turns one unit into bytes, or reports that it cannot.
type dumpReading func(digits string, out []byte) ([]byte, bool)

var dumpReadings = []dumpReading{
	// hex, big-endian: xxd, hexdump -C, od -t x1, 0x.., \x..
	func(d string, out []byte) ([]byte, bool) {
		if len(d)%2 != 0 {
			return out, false
		}
		for i := 0; i < len(d); i += 2 {
			out = append(out, unhex(d[i])<<4|unhex(d[i+1]))
		}
		return out, true
	},
	// hex words, little-endian: hexdump, od -x
	func(d string, out []byte) ([]byte, bool) {
		if len(d) < 4 || len(d)%2 != 0 {
			return out, false
		}
		for i := len(d) - 2; i >= 0; i -= 2 {
			out = append(out, unhex(d[i])<<4|unhex(d[i+1]))
		}
		return out, true
	},
	// octal bytes (od -b, -t o1) and 16-bit words, little-endian (od)
	func(d string, out []byte) ([]byte, bool) {
		v, ok := number(d, 8)
		switch {
		case !ok:
		case len(d) <= 3 && v < 256:
			return append(out, byte(v)), true
		case len(d) == 6 && v < 1<<16:
			return append(out, byte(v), byte(v>>8)), true
		}
		return out, false
	},
	// decimal bytes: od -t d1, -t u1, a byte array printed
	func(d string, out []byte) ([]byte, bool) {
		if v, ok := number(d, 10); ok && len(d) <= 3 && v < 256 {
			return append(out, byte(v)), true
		}
		return out, false
	},
}

// number reads d in base 8 or 10; ok is false for another digit.
func number(d string, base int) (int, bool) {
	v := 0
	for i := 0; i < len(d); i++ {
		c := int(d[i]) - '0'
		if c < 0 || c >= base {
			return 0, false
		}
		v = v*base + c
	}
	return v, true
}

// decodeNumbers decodes d.toks in every reading. A unit a reading cannot
// take ends the bytes decoded so far: they are searched, and decoding goes
// on after it.
func (d *dumpReader) decodeNumbers() {
	var dec []byte
	var from []int32 // unit index of each decoded byte
	for _, read := range dumpReadings {
		dec, from = dec[:0], from[:0]
		for ti, t := range d.toks {
			n := len(dec)
			var ok bool
			if dec, ok = read(d.v.text[t.da:t.db], dec); !ok {
				d.search(dec, from)
				dec, from = dec[:0], from[:0]
				continue
			}
			for range len(dec) - n {
				from = append(from, int32(ti))
			}
		}
		d.search(dec, from)
	}
}

// search looks for secrets in bytes decoded from units (from[i] is the
// unit of byte i) and redacts the units that carry a finding.
func (d *dumpReader) search(dec []byte, from []int32) {
	if len(dec) < minKnownLen || d.budget.bytes <= 0 {
		return
	}
	d.budget.bytes -= len(dec)
	text := string(dec)
	var found []scrubSpan
	if printable(text) {
		found = d.s.decodedSpans(text)
	} else {
		found = d.s.knownSpans(text)
	}
	// One span per line for the units, one for each line's text column:
	// a raw finding in a column does not hide the units beside it.
	for _, sp := range found {
		for t := from[sp.start]; t <= from[sp.end-1]; {
			first := d.toks[t]
			for t++; t <= from[sp.end-1] && d.toks[t].line == first.line; t++ {
			}
			last := d.toks[t-1]
			a, e := d.v.span(int(first.a), int(last.b))
			d.spans = append(d.spans, scrubSpan{a, e, -1, sp.marker})
			if first.colB > first.colA {
				a, e := d.v.span(int(first.colA), int(first.colB))
				d.spans = append(d.spans, scrubSpan{a, e, -1, sp.marker})
			}
		}
	}
}

// knownSpans is decodedSpans for bytes that are not text: the known
// values only, forwards and backwards.
func (s *Scrubber) knownSpans(text string) []scrubSpan {
	if s.knownAC == nil {
		return nil
	}
	var spans []scrubSpan
	s.knownAC.scan(text, func(end int, id int32) {
		spans = append(spans, scrubSpan{end - s.knownAC.lens[id], end, -1, s.known[id]})
	})
	return s.reversedKnown(text, spans)
}

// printable reports whether at least 9 in 10 bytes of text are printing
// ASCII or white space: the rules run only on such decoded text.
func printable(text string) bool {
	good := 0
	for i := 0; i < len(text); i++ {
		if c := text[i]; c >= 0x20 && c < 0x7f || c == '\n' || c == '\r' || c == '\t' {
			good++
		}
	}
	return good*10 >= len(text)*9
}

// chars reads, from view offset va, characters separated by gap ("Z k 3",
// "Z,k,3", `"Z","k"`; a line break may stand for a gap) and, when the gap
// is od -c's three blanks, od -c's fixed fields. It searches the
// characters and returns where they end.
func (d *dumpReader) chars(va int, gap string) int {
	end := 0
	if odGap(gap) {
		end = d.odChars(va)
	}
	text := d.v.text
	if gap == "" || va >= len(text) {
		return end
	}
	// Back to the first character of the sequence.
	for va >= len(gap)+1 && text[va-len(gap):va] == gap {
		va -= len(gap) + 1
	}
	d.toks = d.toks[:0]
	gapNL := gap + "\n"
	p := va
	for p < len(text) {
		d.toks = append(d.toks, dumpTok{a: int32(p), b: int32(p + 1), c: text[p]})
		q := p + 1
		switch {
		case strings.HasPrefix(text[q:], gapNL) && !strings.HasPrefix(text[q+len(gap)+1:], gap):
			q += len(gap) + 1 // folded after a gap; a line break followed by a gap is a unit
		case strings.HasPrefix(text[q:], gap):
			q += len(gap)
		case strings.HasPrefix(text[q:], "\n"):
			q++
		case strings.HasPrefix(text[q:], "\r\n"):
			q += 2
		default:
			if len(text)-q <= len(gap) { // the text ends inside a gap
				q = len(text)
				p = q - 1
			} else {
				q = len(text) + 1
			}
		}
		if q >= len(text) {
			break
		}
		p = q
	}
	d.searchChars()
	return max(end, p+1)
}

// odChars reads od -c's lines from the one holding view offset va (a
// field's character): an offset, then fields four wide (a character, an
// escape like \n, or three octal digits). The first line is read from its
// first field before va.
func (d *dumpReader) odChars(va int) int {
	text := d.v.text
	la := strings.LastIndexByte(text[:va], '\n') + 1
	fs := max(la, va-3)
	for fs-4 >= la {
		if _, ok := odField(text[fs-4 : fs]); !ok {
			break
		}
		fs -= 4
	}
	d.toks = d.toks[:0]
	end := va
	for first := true; la < len(text); first = false {
		lb := strings.IndexByte(text[la:], '\n')
		if lb < 0 {
			lb = len(text)
		} else {
			lb += la
		}
		line := strings.TrimSuffix(text[la:lb], "\r")
		p := 0
		if q := hexPrefix(line); q >= 6 {
			p = q
		}
		if first {
			p = fs - la
		}
		n := len(d.toks)
		for ; p+4 <= len(line); p += 4 {
			c, ok := odField(line[p : p+4])
			if !ok {
				break
			}
			d.toks = append(d.toks, dumpTok{a: int32(la + p), b: int32(la + p + 4), c: c, line: int32(la)})
		}
		if len(d.toks) == n {
			break
		}
		end = lb
		la = lb + 1
	}
	d.searchChars()
	return end
}

// odField is the byte one od -c field stands for.
func odField(f string) (byte, bool) {
	t := strings.TrimLeft(f, " ")
	switch {
	case t == "":
		return ' ', true
	case len(t) == 1 && len(f)-len(t) == 3:
		return t[0], true
	case len(t) == 2 && t[0] == '\\':
		if i := strings.IndexByte(`0abtnvfr\`, t[1]); i >= 0 {
			return "\x00\a\b\t\n\v\f\r\\"[i], true
		}
	case len(t) == 3:
		if v, ok := number(t, 8); ok && v < 256 {
			return byte(v), true
		}
	}
	return 0, false
}

// searchChars searches the characters in d.toks.
func (d *dumpReader) searchChars() {
	if len(d.toks) < minKnownLen {
		return
	}
	dec := make([]byte, 0, len(d.toks))
	from := make([]int32, 0, len(d.toks))
	for i, t := range d.toks {
		dec = append(dec, t.c)
		from = append(from, int32(i))
	}
	d.search(dec, from)
}
