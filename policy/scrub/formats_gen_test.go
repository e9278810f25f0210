package scrub

import (
	"encoding/base32"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf16"
)

// Writers of the formats tools print bytes in, as the tools write them
// (GNU coreutils od and base32, util-linux hexdump, vim's xxd, glibc's
// iconv): the encodings corpus is generated with them, never by running a
// tool on a secret.

// xxdDump is `xxd [-g group] [-c cols] [-u]`.
func xxdDump(b []byte, group, cols int, upper bool) string {
	hx := "%02x"
	if upper {
		hx = "%02X"
	}
	width := cols*2 + (cols-1)/group // the hex area of a full line
	var sb strings.Builder
	for off := 0; off < len(b); off += cols {
		line := b[off:min(len(b), off+cols)]
		var h strings.Builder
		for i, c := range line {
			if i > 0 && i%group == 0 {
				h.WriteByte(' ')
			}
			fmt.Fprintf(&h, hx, c)
		}
		fmt.Fprintf(&sb, "%08x: %-*s  %s\n", off, width, h.String(), printableColumn(line))
	}
	return sb.String()
}

// hexdumpC is `hexdump -C` (-v: no * for repeated lines).
func hexdumpC(b []byte, v bool) string {
	var sb strings.Builder
	prev := ""
	starred := false
	for off := 0; off < len(b); off += 16 {
		line := b[off:min(len(b), off+16)]
		if !v && len(line) == 16 && string(line) == prev {
			if !starred {
				sb.WriteString("*\n")
				starred = true
			}
			continue
		}
		prev, starred = string(line), false
		var h strings.Builder
		for i, c := range line {
			if i == 8 {
				h.WriteByte(' ')
			}
			fmt.Fprintf(&h, "%02x ", c)
		}
		fmt.Fprintf(&sb, "%08x  %-49s |%s|\n", off, h.String(), printableColumn(line))
	}
	fmt.Fprintf(&sb, "%08x\n", len(b))
	return sb.String()
}

// hexdumpWords is `hexdump` and `od -x` (16-bit little-endian words;
// hexdump's offsets in hex, od's in octal).
func hexdumpWords(b []byte, octalOffsets bool) string {
	off := "%07x"
	if octalOffsets {
		off = "%07o"
	}
	var sb strings.Builder
	for o := 0; o < len(b); o += 16 {
		fmt.Fprintf(&sb, off, o)
		for i := o; i < min(len(b), o+16); i += 2 {
			w := int(b[i])
			if i+1 < len(b) {
				w |= int(b[i+1]) << 8
			}
			fmt.Fprintf(&sb, " %04x", w)
		}
		sb.WriteByte('\n')
	}
	fmt.Fprintf(&sb, off+"\n", len(b))
	return sb.String()
}

// odDump is od with one -t type per byte (o1, x1, d1, u1, c), or the
// default (o2 words); an empty offset format is -An.
func odDump(b []byte, typ string, offsets bool) string {
	var sb strings.Builder
	per := 16
	for o := 0; o < len(b); o += per {
		if offsets {
			fmt.Fprintf(&sb, "%07o", o)
		}
		line := b[o:min(len(b), o+per)]
		switch typ {
		case "o2":
			for i := 0; i < len(line); i += 2 {
				w := int(line[i])
				if i+1 < len(line) {
					w |= int(line[i+1]) << 8
				}
				fmt.Fprintf(&sb, " %06o", w)
			}
		default:
			for _, c := range line {
				switch typ {
				case "o1":
					fmt.Fprintf(&sb, " %03o", c)
				case "x1":
					fmt.Fprintf(&sb, " %02x", c)
				case "d1":
					fmt.Fprintf(&sb, " %4d", int8(c))
				case "u1":
					fmt.Fprintf(&sb, " %3d", c)
				case "c":
					sb.WriteString(odCharField(c))
				}
			}
		}
		sb.WriteByte('\n')
	}
	if offsets {
		fmt.Fprintf(&sb, "%07o\n", len(b))
	}
	return sb.String()
}

func odCharField(c byte) string {
	switch c {
	case 0:
		return `  \0`
	case '\a':
		return `  \a`
	case '\b':
		return `  \b`
	case '\f':
		return `  \f`
	case '\n':
		return `  \n`
	case '\r':
		return `  \r`
	case '\t':
		return `  \t`
	case '\v':
		return `  \v`
	}
	if c >= 0x20 && c < 0x7f {
		return "   " + string(rune(c))
	}
	return fmt.Sprintf(" %03o", c)
}

func printableColumn(line []byte) string {
	col := []byte(string(line))
	for i, c := range col {
		if c < 0x20 || c >= 0x7f {
			col[i] = '.'
		}
	}
	return string(col)
}

// base32Wrapped is `base32` (std) or `basenc --base32hex`, wrapped at 76.
func base32Wrapped(b []byte, hexAlphabet bool) string {
	enc := base32.StdEncoding
	if hexAlphabet {
		enc = base32.HexEncoding
	}
	return wrap(enc.EncodeToString(b), 76)
}

// utf16Text is `iconv -t UTF-16` (a byte-order mark, then little-endian,
// as glibc writes it), -t UTF-16LE or -t UTF-16BE.
func utf16Text(s, form string) string {
	var out []byte
	if form == "UTF-16" {
		out = append(out, 0xff, 0xfe)
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if form == "UTF-16BE" {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return string(out)
}

// joinedUnits writes each byte with format f, joined by sep: 5a:6b,
// 0x5a, 0x6b, \x5a\x6b, [90,107], Z k 3.
func joinedUnits(b []byte, f, sep string) string {
	parts := make([]string, len(b))
	for i, c := range b {
		if f == "%c" {
			parts[i] = string(rune(c))
			continue
		}
		parts[i] = fmt.Sprintf(f, c)
	}
	return strings.Join(parts, sep)
}

// revBase64 is `rev | base64`.
func revBase64(s string) string {
	return base64.StdEncoding.EncodeToString([]byte(reversed(s)))
}
