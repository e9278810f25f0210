// Package filediff renders the change a write makes to one file as a
// person reads it before approving: a summary line ("edit a.go: +3 -1
// lines", "new file a.go, 12 bytes", "delete a.go, 40 bytes", "binary
// file…") and, for text, a unified diff with three lines of context.
// Inputs and output are bounded, so a huge file costs a line, not the
// daemon's memory or time. The line matching is go-difflib's (already in
// the module graph through testify; Python difflib's algorithm); this
// package only renders its opcodes, so a missing final newline is said
// as diff says it.
//
// The text is what the file holds, unescaped: callers show it through
// internal/termsafe (the CLI) or html/template (the review page).
package filediff

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"
)

const (
	// MaxInput bounds each side of a diff, in bytes; past it only the
	// summary is given.
	MaxInput = 256 << 10
	// MaxLines bounds each side's lines (the matcher's cost grows with them).
	MaxLines = 20000
	// MaxOutput bounds the rendered text; past it the diff is cut at a
	// line and says so.
	MaxOutput = 64 << 10
	// context is the unchanged lines shown around each change.
	context = 3
)

// File is one side of a change: the file's bytes, and whether it exists.
type File struct {
	Data   []byte
	Exists bool
}

// Unified renders the change from old to new of the file at path (as the
// agent named it).
func Unified(path string, old, new File) string {
	switch {
	case !old.Exists && !new.Exists:
		return fmt.Sprintf("no file %s, and none written", path)
	case !old.Exists:
		return body(fmt.Sprintf("new file %s, %s", path, size(len(new.Data))), path, nil, new.Data)
	case !new.Exists:
		return body(fmt.Sprintf("delete %s, %s", path, size(len(old.Data))), path, old.Data, nil)
	case bytes.Equal(old.Data, new.Data):
		return fmt.Sprintf("no change to %s (%s)", path, size(len(old.Data)))
	}
	return body("", path, old.Data, new.Data)
}

// body is the summary and, when both sides are text within the caps, the
// diff. summary "" means an edit, summarised by its line counts; a nil
// side is no file (/dev/null).
func body(summary, path string, a, b []byte) string {
	switch {
	case binary(a) || binary(b):
		if summary == "" {
			summary = fmt.Sprintf("edit %s", path)
		}
		return fmt.Sprintf("%s: binary file, %s → %s; not shown", summary, size(len(a)), size(len(b)))
	case len(a) > MaxInput || len(b) > MaxInput:
		if summary == "" {
			summary = fmt.Sprintf("edit %s, %s → %s", path, size(len(a)), size(len(b)))
		}
		return fmt.Sprintf("%s; over the diff cap of %s, not shown", summary, size(MaxInput))
	}
	al, bl := lines(a), lines(b)
	if len(al) > MaxLines || len(bl) > MaxLines {
		if summary == "" {
			summary = fmt.Sprintf("edit %s", path)
		}
		return fmt.Sprintf("%s; over %d lines, not shown", summary, MaxLines)
	}
	groups := difflib.NewMatcher(al, bl).GetGroupedOpCodes(context)
	var hunks strings.Builder
	added, removed := 0, 0
	for _, g := range groups {
		first, last := g[0], g[len(g)-1]
		fmt.Fprintf(&hunks, "@@ -%s +%s @@\n", span(first.I1, last.I2), span(first.J1, last.J2))
		for _, op := range g {
			switch op.Tag {
			case 'e':
				put(&hunks, ' ', al[op.I1:op.I2])
			case 'r', 'd':
				put(&hunks, '-', al[op.I1:op.I2])
				removed += op.I2 - op.I1
			}
			if op.Tag == 'r' || op.Tag == 'i' {
				put(&hunks, '+', bl[op.J1:op.J2])
				added += op.J2 - op.J1
			}
		}
	}
	if summary == "" {
		summary = fmt.Sprintf("edit %s: +%d -%d lines", path, added, removed)
	}
	from, to := "a/"+path, "b/"+path
	switch {
	case a == nil:
		from = "/dev/null"
	case b == nil:
		to = "/dev/null"
	}
	out := summary + "\n--- " + from + "\n+++ " + to + "\n" + hunks.String()
	return clip(out)
}

// lines splits s keeping each line's newline; nil for empty.
func lines(s []byte) []string {
	if len(s) == 0 {
		return nil
	}
	out := strings.SplitAfter(string(s), "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// put writes each line with its mark; a last line without a newline
// gets diff's note.
func put(b *strings.Builder, mark byte, ls []string) {
	for _, l := range ls {
		b.WriteByte(mark)
		b.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// span is a hunk's range as unified diff writes it: start,count from 1,
// the line before for an empty range.
func span(lo, hi int) string {
	n := hi - lo
	start := lo + 1
	if n == 0 {
		start = lo
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// binary is content a terminal diff would garble: a NUL or bytes that
// are not UTF-8.
func binary(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) }

func size(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// clip cuts s at the last whole line within MaxOutput.
func clip(s string) string {
	if len(s) <= MaxOutput {
		return s
	}
	cut := strings.LastIndexByte(s[:MaxOutput], '\n') + 1
	if cut == 0 { // one long line: cut at a character
		cut = MaxOutput
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "\n"
		cut++
	}
	return s[:cut] + fmt.Sprintf("… the diff is cut here: it is over %s\n", size(MaxOutput))
}
