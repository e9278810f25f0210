package scrub

import (
	"encoding/base32"
	"strings"
)

// Base32. `base32` and `basenc --base32hex` (wrapped at 76 columns like
// base64) write only upper-case letters and digits, a subset of base64's
// alphabet, so their runs reach decodedFinds with the others; a run that
// is all base32 is tried as base32 first. TOTP seeds and other random
// base32 decode to bytes that are not text and are left alone.

var (
	base32Std = base32.StdEncoding.WithPadding(base32.NoPadding)
	base32Hex = base32.HexEncoding.WithPadding(base32.NoPadding)
)

// base32Alphabet says which base32 alphabet every byte of run (padding
// aside) belongs to: the standard one, the extended-hex one, or neither.
// A run of digits only is hex, which decodedFinds reads first.
func base32Alphabet(run string) *base32.Encoding {
	std, ext := true, true
	for i := 0; i < len(run) && (std || ext); i++ {
		switch c := run[i]; {
		case c >= 'A' && c <= 'V':
		case c >= 'W' && c <= 'Z':
			ext = false
		case c >= '2' && c <= '7':
		case c == '0' || c == '1' || c == '8' || c == '9':
			std = false
		case c == '=':
		default:
			return nil
		}
	}
	switch {
	case std:
		return base32Std
	case ext:
		return base32Hex
	}
	return nil
}

// asciiBase32 is asciiBase64 for base32: the first character of every
// group of eight holds a byte's top five bits, 1 (tab, line feed) or 4 to
// 15 (printable ASCII).
func asciiBase32(r string, enc *base32.Encoding) bool {
	first := "BEFGHIJKLMNOP"
	if enc == base32Hex {
		first = "1456789ABCDEF"
	}
	for i := 0; i < len(r) && i < textSample; i += 8 {
		if strings.IndexByte(first, r[i]) < 0 {
			return false
		}
	}
	return true
}

// base32Whole cuts r to a length that decodes to whole bytes.
func base32Whole(r string) string {
	for n := len(r); n > 0; n-- {
		switch n % 8 {
		case 0, 2, 4, 5, 7:
			return r[:n]
		}
	}
	return ""
}

// base32Finds decodes a run written in base32 (at its first aligns
// alignments; a run glued from lines may have text before it) and
// returns, in run offsets, the characters that carry what is found in
// the decoded text. ok is false when the run is not base32 text, so that
// it is read as base64.
func (s *Scrubber) base32Finds(run string, aligns int, budget *decodeBudget) (out []found, ok bool) {
	enc := base32Alphabet(run)
	if enc == nil {
		return nil, false
	}
	trimmed := strings.TrimRight(run, "=")
	if aligns > 1 {
		aligns = 8
	}
	for off := 0; off < aligns && off < len(trimmed); off++ {
		r := base32Whole(trimmed[off:])
		if len(r) < minEncodedRun || budget.bytes <= 0 {
			break
		}
		sample := base32Whole(r[:min(len(r), textSample/5*8)])
		if !asciiBase32(r, enc) || !textLike(sample, func(p string) ([]byte, error) { return enc.DecodeString(p) }) {
			continue
		}
		dec, err := enc.DecodeString(r)
		if err != nil {
			continue
		}
		budget.bytes -= len(dec)
		for _, sp := range s.decodedSpans(string(dec)) {
			a := off + sp.start*8/5
			b := min(off+(sp.end*8+4)/5, len(run))
			out = append(out, found{a: a, b: b, kind: sp.marker})
		}
		return out, true
	}
	return nil, false
}
