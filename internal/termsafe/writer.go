package termsafe

import (
	"io"
	"sync"
	"unicode/utf8"
)

// Writer passes what is written to it through Text on to another writer:
// the CLI's stdout and stderr, so that no command prints agent text raw,
// whichever field it comes from. A character split across two writes is
// held until its rest arrives; Flush writes what is held. It is safe for
// concurrent use.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	held []byte
}

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes Text(p), less an incomplete character at its end, which
// waits for the next write. It reports len(p) when all is written.
func (t *Writer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := p
	if len(t.held) > 0 {
		b = append(t.held, p...)
		t.held = nil
	}
	if k := incompleteTail(b); k > 0 {
		t.held = append([]byte(nil), b[len(b)-k:]...)
		b = b[:len(b)-k]
	}
	if _, err := io.WriteString(t.w, Text(string(b))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a held partial character (escaped: nothing completes it).
func (t *Writer) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.held) == 0 {
		return nil
	}
	b := t.held
	t.held = nil
	_, err := io.WriteString(t.w, Text(string(b)))
	return err
}

// Raw is the writer underneath, for the few bytes the CLI writes itself
// that a terminal must obey (the dim of a note on a terminal).
func (t *Writer) Raw() io.Writer { return t.w }

// incompleteTail is the length of a UTF-8 sequence cut short at b's end
// (a start byte and fewer continuation bytes than it announces), or 0.
func incompleteTail(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a start byte
			if need := seqLen(c); need > k {
				if utf8.FullRune(b[len(b)-k:]) {
					return 0 // invalid anyway: Text escapes it now
				}
				return k
			}
			return 0
		}
	}
	return 0
}

func seqLen(c byte) int {
	switch {
	case c >= 0xf0:
		return 4
	case c >= 0xe0:
		return 3
	}
	return 2
}

// Interface guards.
var _ io.Writer = (*Writer)(nil)
