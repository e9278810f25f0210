package scrub

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"encoding/hex"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"
)

// Compressed, then encoded: `tar czf - .env | base64`, `xz -c | xxd -p`,
// `zstd -c | base64`, a zlib blob in a JSON field. The decoded bytes are a
// compressed stream, not text; the stream is inflated (within the decoding
// budget) and searched like decoded text. What is found there redacts the
// whole run: an offset inside a compressed stream maps to no particular
// characters.
//
// The formats are the ones a shell has at hand: gzip, zlib, bzip2, xz and
// zstd. Each decoder's own state (a window, a dictionary, a block) is
// charged to a second allowance per text, so that a text made of thousands
// of tiny streams cannot make the scrubber allocate without end.

const (
	maxStatePerText = 64 << 20  // decoder state (windows, dictionaries) for one text
	maxStreamState  = 8 << 20   // a stream asking for a larger window or dictionary is not inflated
	deflateState    = 64 << 10  // a flate reader's window and tables, rounded up
	zstdBlock       = 128 << 10 // a zstd reader's block buffer, on top of its window
	// compressedLetters are the first characters of the base64 of every
	// header compressedHead accepts: gzip (1f: H), zlib (x8 with x <= 7:
	// CGKOSWae), bzip2 (B: Q), xz (fd: / or _) and zstd (28: K).
	compressedLetters = "CGHKOSWaeQ/_"
)

// decodeBudget is what is left to spend on one text: decoded bytes, and
// decoder state.
type decodeBudget struct {
	bytes, state int
}

// format is a compressed stream's kind, told from its first bytes.
type format uint8

const (
	notCompressed format = iota
	gzipStream
	zlibStream
	bzip2Stream
	xzStream
	zstdStream
)

// compressedHead reports which compressed format b starts, if any. About
// one text in 300 starts like a zlib header too: a stream that does not
// inflate to a finding leaves the run to be read as text.
func compressedHead(b []byte) format {
	switch {
	case len(b) < 3:
		return notCompressed
	case b[0] == 0x1f && b[1] == 0x8b && b[2] == 8:
		return gzipStream
	case len(b) >= 4 && string(b[:3]) == "BZh" && b[3] >= '1' && b[3] <= '9':
		return bzip2Stream
	case len(b) >= 6 && string(b[:6]) == "\xfd7zXZ\x00":
		return xzStream
	case len(b) >= 4 && string(b[:4]) == "\x28\xb5\x2f\xfd":
		return zstdStream
	case b[0]&0x0f == 8 && b[0]>>4 <= 7 && (uint(b[0])<<8|uint(b[1]))%31 == 0:
		return zlibStream
	}
	return notCompressed
}

// compressedBase64Start reports whether a base64 run may start a
// compressed stream: its first letter is one of compressedLetters and,
// where that letter is common in text that is not base64, what follows
// matches too (a path starts with /, xz's magic gives /Td6 or _Td6; Q is
// bzip2's only before lpo).
func compressedBase64Start(r string) bool {
	switch r[0] {
	case '/', '_':
		return strings.HasPrefix(r[1:], "Td6")
	case 'Q':
		return strings.HasPrefix(r[1:], "lpo")
	}
	return strings.IndexByte(compressedLetters, r[0]) >= 0
}

// inflated is inflatedFinds for a run aligned at its start: base64 in enc,
// or hex when enc is nil. Its first characters, decoded into a buffer on
// the stack (this runs for every run), tell a compressed stream.
func (s *Scrubber) inflated(r string, enc *base64.Encoding, off, n int, budget *decodeBudget) []found {
	if enc != nil && !compressedBase64Start(r) {
		return nil
	}
	var head [6]byte
	var k int
	var err error
	if enc == nil {
		k, err = hex.Decode(head[:], []byte(r[:min(len(r), 2*len(head))]))
	} else {
		k, err = enc.Decode(head[:], []byte(r[:min(len(r), 8)]))
	}
	if err != nil || compressedHead(head[:k]) == notCompressed {
		return nil
	}
	var dec []byte
	if enc == nil {
		dec, err = hex.DecodeString(r)
	} else {
		dec, err = enc.DecodeString(r)
	}
	if err != nil {
		return nil
	}
	return s.inflatedFinds(dec, off, n, budget)
}

// inflatedFinds inflates a compressed stream (what inflates before a
// corrupt or truncated end is kept, as a reader would see it) and returns
// the whole run, from off to n, when the rules or the known values find
// anything in it.
func (s *Scrubber) inflatedFinds(dec []byte, off, n int, budget *decodeBudget) []found {
	if budget.bytes <= 0 {
		return nil
	}
	f := compressedHead(dec)
	state, ok := streamState(f, dec)
	if !ok || state > budget.state {
		return nil
	}
	zr, closer := openStream(f, dec)
	if zr == nil {
		return nil
	}
	budget.state -= state
	text, _ := io.ReadAll(io.LimitReader(zr, int64(budget.bytes)))
	closer()
	budget.bytes -= max(len(text), len(dec))
	if spans := s.decodedSpans(string(text)); len(spans) > 0 {
		return []found{{a: off, b: n, kind: spans[0].marker}}
	}
	return nil
}

// streamState is what a reader of the stream in dec will allocate (its
// window, dictionary or block), read from the stream's header before any
// reader exists; ok is false when the header cannot be read or declares
// a window or dictionary over maxStreamState.
func streamState(f format, dec []byte) (int, bool) {
	switch f {
	case gzipStream, zlibStream:
		return deflateState, true
	case bzip2Stream:
		// The block size is the level in hundreds of kilobytes; the
		// reader keeps four bytes per block byte.
		return int(dec[3]-'0') * 400_000, true
	case xzStream:
		dict, ok := xzDictCap(dec)
		return dict, ok && dict <= maxStreamState
	case zstdStream:
		window, ok := zstdWindow(dec)
		return window + zstdBlock, ok && window <= maxStreamState
	}
	return 0, false
}

// openStream opens a reader of the stream in dec, in format f, and says
// how to release it; a nil reader when the stream cannot be read.
func openStream(f format, dec []byte) (io.Reader, func()) {
	src := bytes.NewReader(dec)
	none := func() {}
	var zr io.Reader
	var err error
	switch f {
	case gzipStream:
		zr, err = gzip.NewReader(src)
	case zlibStream:
		zr, err = zlib.NewReader(src)
	case bzip2Stream:
		zr = bzip2.NewReader(src)
	case xzStream:
		zr, err = xz.NewReader(src)
	case zstdStream:
		// WithDecoderMaxMemory would refuse a window larger than the
		// budget; the output is cut at the budget by the caller instead.
		d, err := zstd.NewReader(src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxStreamState))
		if err != nil {
			return nil, none
		}
		return d, d.Close
	}
	if err != nil || zr == nil {
		return nil, none
	}
	return zr, none
}

// xzDictCap reads the dictionary size the first block of an xz stream
// declares for its LZMA2 filter. The xz reader allocates that dictionary
// before it decodes a byte, so it is read first: a stream of a few dozen
// bytes may declare 1.5 GiB. ok is false for a stream this cannot read (no
// block, a filter chain that does not end in LZMA2).
func xzDictCap(b []byte) (int, bool) {
	const streamHeader = 12 // magic, flags, CRC32
	if len(b) < streamHeader+2 || b[streamHeader] == 0 {
		return 0, false // no block: an empty stream
	}
	flags := b[streamHeader+1]
	p := streamHeader + 2
	for _, present := range []bool{flags&0x40 != 0, flags&0x80 != 0} { // compressed and uncompressed sizes
		if present {
			if _, p = uvarint(b, p); p < 0 {
				return 0, false
			}
		}
	}
	for i := 0; i <= int(flags&3); i++ { // one to four filters; LZMA2 is the last
		var id, size uint64
		if id, p = uvarint(b, p); p < 0 {
			return 0, false
		}
		if size, p = uvarint(b, p); p < 0 || size > uint64(len(b)-p) {
			return 0, false
		}
		if i == int(flags&3) {
			if id != 0x21 || size != 1 {
				return 0, false
			}
			dict, err := lzma.DecodeDictCap(b[p])
			return int(dict), err == nil
		}
		p += int(size)
	}
	return 0, false
}

// zstdWindow reads the window a zstd frame's header declares (RFC 8878
// 3.1.1.1): the window descriptor, or, for a single-segment frame, the
// content size. ok is false for a header cut short.
func zstdWindow(b []byte) (int, bool) {
	if len(b) < 6 {
		return 0, false
	}
	fhd := b[4]
	if fhd&0x20 == 0 { // a window descriptor follows
		exp, mantissa := uint(b[5]>>3), uint64(b[5]&7)
		base := uint64(1) << (10 + exp)
		return int(min(base+base/8*mantissa, 1<<40)), true
	}
	p := 5 + []int{0, 1, 2, 4}[fhd&3] // past the dictionary ID
	n := []int{1, 2, 4, 8}[fhd>>6]
	if len(b) < p+n {
		return 0, false
	}
	var size uint64
	for i := n - 1; i >= 0; i-- { // little-endian
		size = size<<8 | uint64(b[p+i])
	}
	if n == 2 {
		size += 256
	}
	return int(min(size, 1<<40)), true
}

// uvarint reads xz's multibyte integer (seven bits a byte, low first, at
// most nine bytes) at b[p]; the position after it, or -1.
func uvarint(b []byte, p int) (uint64, int) {
	var v uint64
	for i := 0; i < 9 && p < len(b); i++ {
		c := b[p]
		p++
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, p
		}
	}
	return 0, -1
}
