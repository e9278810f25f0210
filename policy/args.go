package policy

import (
	"github.com/toolcage/toolcage/errdefs"
)

// Bounds on a call's arguments, checked when the call arrives, before
// anything parses, parks or stores them.
type ArgumentBounds struct {
	// MaxBytes caps the arguments' JSON text (0: no cap).
	MaxBytes int
	// MaxDepth caps how deep objects and arrays nest (0: no cap).
	MaxDepth int
}

// CheckArguments refuses arguments past b: limit_exceeded naming the
// limit (arguments, or depth). It reads the text once and builds nothing,
// so a hostile value costs no more than its bytes.
func CheckArguments(args []byte, b ArgumentBounds) error {
	if b.MaxBytes > 0 && len(args) > b.MaxBytes {
		return errdefs.LimitError(errdefs.LimitArguments, "the call's arguments are %d bytes, over the limit of %d (worker_limits.argument_bytes)", len(args), b.MaxBytes)
	}
	if b.MaxDepth > 0 {
		if d := JSONDepth(args, b.MaxDepth); d > b.MaxDepth {
			return errdefs.LimitError(errdefs.LimitDepth, "the call's arguments nest more than %d levels deep (worker_limits.argument_depth)", b.MaxDepth)
		}
	}
	return nil
}

// JSONDepth is how deep objects and arrays nest in the JSON text, counted
// up to stop+1 (it returns as soon as it passes stop; stop <= 0 counts
// all). Brackets inside strings do not count; text that is not valid
// JSON is counted as far as it reads, for the parser to refuse after.
func JSONDepth(text []byte, stop int) int {
	depth, deepest := 0, 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
			if depth > deepest {
				deepest = depth
				if stop > 0 && deepest > stop {
					return deepest
				}
			}
		case ']', '}':
			depth--
		}
	}
	return deepest
}
