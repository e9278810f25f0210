package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/toolcage/toolcage/policy"
)

// Bounds on what a page shows of one JSON value an agent wrote (a call's
// arguments, a tool's definition). Indenting costs a line per level per
// value: 18 KB nested 9,000 deep would be over 160 MB of page. A value
// nested past maxShownDepth, or larger than its byte bound, is shown as
// its compact text cut at that bound, with what was left out said; the
// whole value stays in the API (approvals list --json, tools show).
const (
	maxShownArgs       = 64 << 10
	maxShownDefinition = 512 << 10
	maxShownDepth      = 24
)

// indentable reports whether v may be shown indented within the bounds.
func indentable(v []byte, maxBytes int) bool {
	return len(v) <= maxBytes && policy.JSONDepth(v, maxShownDepth) <= maxShownDepth
}

// compactShown is v as one line cut at maxBytes (at a rune's start),
// then how many bytes were left out.
func compactShown(v []byte, maxBytes int) string {
	if len(v) <= maxBytes {
		return string(v)
	}
	cut := maxBytes
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return fmt.Sprintf("%s … (%d more bytes left out here)", v[:cut], len(v)-cut)
}

// indented is v indented when within the bounds, else compactShown.
func indented(v []byte, maxBytes int) string {
	if indentable(v, maxBytes) {
		var b bytes.Buffer
		if json.Indent(&b, v, "", "  ") == nil {
			return b.String()
		}
	}
	return compactShown(v, maxBytes)
}
