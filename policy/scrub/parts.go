package scrub

import (
	"sort"
	"strings"
)

// A value split across writes. A call's output reaches the scrubber in
// parts, each scrubbed on its own: a JavaScript tool's log lines, its
// result, its error, and inside a result's JSON its strings (a shell
// tool's stdout and stderr). A tool that prints half of a secret in one
// write and the rest in the next (console.log twice, stdout then stderr,
// two strings of an array) leaves no part holding it, while the reader
// sees the parts one after the other and joins them. So the end of each
// part and the start of the next are read together, in both orders (the
// reader may take stderr before stdout), joined by a line break as they
// are shown, and what is found across the join is redacted on both sides.
// This runs for calls with known values: it is their values a tool is
// given to hide.

// Part is one piece of a call's output, in the order a reader sees it.
type Part struct {
	Text string
	// JSON marks a JSON document: each of its string values is a part.
	JSON bool
}

// maxJoinSide bounds how much of each part is read at a join.
const maxJoinSide = 4 << 10

// ScrubAcross returns the texts of parts (each already scrubbed) with
// what is found only across the join of two consecutive pieces redacted.
func (s *Scrubber) ScrubAcross(parts []Part) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.Text
	}
	if s.knownAC == nil {
		return out
	}
	var pieces []piece
	for i, p := range parts {
		if p.JSON {
			pieces = jsonStrings(p.Text, i, pieces)
		} else if p.Text != "" {
			pieces = append(pieces, piece{i, 0, len(p.Text)})
		}
	}
	side := min(maxJoinSide, 2*s.knownAC.maxLen+64)
	// Every join, in both orders, goes into one text, each apart from the
	// next by a blank line no finder reads across: one pass for all.
	var b strings.Builder
	var joins []join
	for k := 0; k+1 < len(pieces); k++ {
		x, y := pieces[k], pieces[k+1]
		joins = addJoin(&b, parts, x, y, side, joins)
		joins = addJoin(&b, parts, y, x, side, joins)
	}
	if len(joins) == 0 {
		return out
	}
	found := make([][]scrubSpan, len(parts))
	for _, sp := range s.allSpans(b.String()) {
		n := sort.Search(len(joins), func(i int) bool { return joins[i].end > sp.start })
		if n == len(joins) {
			continue
		}
		j := joins[n]
		if sp.start < j.start || sp.end > j.end {
			continue // across two joins
		}
		// The parts were scrubbed alone: what is found here, across the
		// break or on one side of it (a dump's line), the join showed.
		head := j.at + len(joinBreak)
		if sp.start < j.at {
			found[j.x.part] = append(found[j.x.part], scrubSpan{j.xs + sp.start - j.start, j.xs + min(sp.end, j.at) - j.start, sp.prio, sp.marker})
		}
		if sp.end > head {
			found[j.y.part] = append(found[j.y.part], scrubSpan{j.ys + max(sp.start, head) - head, j.ys + sp.end - head, sp.prio, sp.marker})
		}
	}
	for i, sp := range found {
		if len(sp) > 0 {
			out[i], _ = redact(out[i], sp)
		}
	}
	return out
}

// piece is parts[part].Text[a:b].
type piece struct{ part, a, b int }

// join is the end of piece x (its text at xs:xe) and the start of piece y
// (from ys) as they stand in the joined text, from start to end, with the
// line break between them at at.
type join struct {
	x, y           piece
	xs, xe, ys     int
	start, at, end int
}

// joinBreak joins the two sides of a join, and joinGap stands between two
// joins (a blank line, which no finder reads across). Both are written as
// a JSON string escapes them, which every finder reads as line breaks in
// any text, so that a JSON part's escaped text is read as such.
const (
	joinBreak = `\n`
	joinGap   = `\n \n`
)

// addJoin writes the end of piece x and the start of piece y to b, joined
// by a line break.
func addJoin(b *strings.Builder, parts []Part, x, y piece, side int, joins []join) []join {
	xt, yt := parts[x.part].Text, parts[y.part].Text
	xe := trimBreaks(xt, x.a, x.b)
	xs := max(x.a, xe-side)
	ys := y.a + leadingBreaks(yt[y.a:y.b])
	ye := min(y.b, ys+side)
	if xs == xe || ys == ye {
		return joins
	}
	if b.Len() > 0 {
		b.WriteString(joinGap)
	}
	j := join{x: x, y: y, xs: xs, xe: xe, ys: ys, start: b.Len()}
	b.WriteString(xt[xs:xe])
	j.at = b.Len()
	b.WriteString(joinBreak)
	b.WriteString(yt[ys:ye])
	j.end = b.Len()
	return append(joins, j)
}

// trimBreaks is where text[a:b] ends without its trailing line breaks,
// raw or escaped (\n, \r).
func trimBreaks(text string, a, b int) int {
	for b > a {
		switch {
		case text[b-1] == '\n' || text[b-1] == '\r':
			b--
		case b-a >= 2 && text[b-2] == '\\' && (text[b-1] == 'n' || text[b-1] == 'r'):
			b -= 2
		default:
			return b
		}
	}
	return b
}

// leadingBreaks is the length of the line breaks text starts with.
func leadingBreaks(text string) int {
	n := 0
	for n < len(text) {
		switch {
		case text[n] == '\n' || text[n] == '\r':
			n++
		case strings.HasPrefix(text[n:], `\n`) || strings.HasPrefix(text[n:], `\r`):
			n += 2
		default:
			return n
		}
	}
	return n
}

// jsonStrings appends the string values of the JSON document text (not
// object keys), in order, as pieces of part i. It reads no further than
// a string that does not end.
func jsonStrings(text string, i int, pieces []piece) []piece {
	for p := 0; p < len(text); {
		q := strings.IndexByte(text[p:], '"')
		if q < 0 {
			break
		}
		a := p + q + 1
		b := a
		for {
			e := strings.IndexByte(text[b:], '"')
			if e < 0 {
				return pieces
			}
			b += e
			bs := 0
			for bs < b-a && text[b-1-bs] == '\\' {
				bs++
			}
			if bs%2 == 0 {
				break
			}
			b++
		}
		p = b + 1
		k := p
		for k < len(text) && (text[k] == ' ' || text[k] == '\n' || text[k] == '\t' || text[k] == '\r') {
			k++
		}
		if (k == len(text) || text[k] != ':') && b > a {
			pieces = append(pieces, piece{i, a, b})
		}
	}
	return pieces
}
