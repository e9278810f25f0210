package shellguard

import (
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file works out what commands write to standard output when it can be
// known statically (echo, printf, cat of known input, decoders and filters),
// so that what a pipe feeds into a shell can be read and checked.

// outputOf works out what a command writes to standard output.
func (w *walker) outputOf(seg *segment, stdin *data) *data {
	args := nonDropped(seg.args)
	name := seg.name
	inOrigins := originsOf(stdin)
	var procOrigins originSet
	for _, a := range args[1:] {
		procOrigins |= originsOf(a.data)
	}
	switch name {
	case "echo":
		return echoData(args[1:])
	case "printf":
		if len(args) > 1 && args[1].e == "-v" {
			return &data{texts: []string{""}}
		}
		return printfData(args[1:])
	case "cat", "tac":
		files := operands(args, true)
		if len(files) == 0 {
			if stdin == nil {
				return &data{origins: originOther}
			}
			return w.transform(name, args, stdin)
		}
		var out *data
		for k, f := range files {
			d := w.fileData(f, stdin)
			if d == nil {
				d = &data{origins: originOther, file: len(files) == 1}
			}
			out = concatData(out, d, k == 0)
		}
		return out
	}
	switch {
	case fetchers[name]:
		return &data{origins: originFetch | procOrigins}
	case sockets[name] && (name != "openssl" || opensslNet(args)):
		return &data{origins: originSocket | inOrigins | procOrigins}
	case stdin != nil && (decoders[name] || passThrough[name]):
		return w.transform(name, args, stdin)
	case decoders[name]:
		return &data{origins: originDecode | procOrigins}
	}
	return &data{origins: originOther | inOrigins | procOrigins}
}

// transform computes the output of a filter from known input: decoders
// (base64, base32, hex, gzip, bzip2, zlib), rev, tr and pass-through
// commands. Decoders mark the result as decoded either way.
func (w *walker) transform(name string, args []arg, stdin *data) *data {
	origins := stdin.origins
	if decoders[name] && !passThrough[name] {
		origins |= originDecode
	}
	if !stdin.known() {
		return &data{origins: origins | originOther}
	}
	fn := transformer(name, args)
	if fn == nil {
		if passThrough[name] {
			return &data{texts: stdin.texts, origins: origins}
		}
		return &data{origins: origins | originDecode}
	}
	out := &data{origins: origins}
	for _, t := range stdin.texts[:min(len(stdin.texts), 4)] {
		r, ok := fn(t)
		if !ok {
			return &data{origins: origins | originDecode}
		}
		out.texts = append(out.texts, r)
	}
	return out
}

// transformer returns the text function a filter applies, or nil.
func transformer(name string, args []arg) func(string) (string, bool) {
	has := func(opts ...string) bool {
		for _, a := range args[1:] {
			for _, o := range opts {
				// The option itself, or a short one in a cluster.
				if a.e == o || len(o) == 2 && o[0] == '-' && inCluster(a.e, o[1:]) {
					return true
				}
			}
		}
		return false
	}
	switch name {
	case "cat", "tee", "dd", "pv", "buffer", "mbuffer", "stdbuf":
		return func(s string) (string, bool) { return s, true }
	case "base64":
		if has("-d", "--decode", "-D") {
			return decodeBase64
		}
	case "base32":
		if has("-d", "--decode") {
			return decodeBase32
		}
	case "basenc":
		if has("-d", "--decode") {
			switch {
			case has("--base64", "--base64url"):
				return decodeBase64
			case has("--base16"):
				return decodeHex
			case has("--base32"):
				return decodeBase32
			}
		}
	case "openssl":
		if has("base64", "-base64", "-a") && has("-d") {
			return decodeBase64
		}
	case "xxd":
		if has("-r") && has("-p", "-ps", "-plain", "-postscript") {
			return decodeHex
		}
	case "rev":
		return func(s string) (string, bool) {
			lines := strings.Split(s, "\n")
			for i, l := range lines {
				r := []rune(l)
				slices.Reverse(r)
				lines[i] = string(r)
			}
			return strings.Join(lines, "\n"), true
		}
	case "tac":
		return func(s string) (string, bool) {
			lines := strings.SplitAfter(s, "\n")
			slices.Reverse(lines)
			return strings.Join(lines, ""), true
		}
	case "tr":
		return trFunc(args)
	case "gzip", "gunzip", "zcat":
		if name != "gzip" || has("-d", "--decompress", "--uncompress") {
			return func(s string) (string, bool) { return inflate(gzip.NewReader(strings.NewReader(s))) }
		}
	case "bzip2", "bunzip2", "bzcat":
		if name != "bzip2" || has("-d", "--decompress") {
			return func(s string) (string, bool) { return inflate(bzip2.NewReader(strings.NewReader(s)), nil) }
		}
	case "zlib-flate":
		if has("-uncompress") {
			return func(s string) (string, bool) { return inflate(zlib.NewReader(strings.NewReader(s))) }
		}
	}
	return nil
}

// inflate reads what a decompressor (made with err) writes, up to
// maxDecoded bytes.
func inflate(r io.Reader, err error) (string, bool) {
	if err != nil {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(r, maxDecoded))
	return string(b), err == nil || len(b) > 0 // (a truncated stream's start counts)
}

// spaces are the white space encoders wrap their output with.
var spaces = strings.NewReplacer(" ", "", "\n", "", "\t", "", "\r", "")

func decodeBase64(s string) (string, bool) {
	s = spaces.Replace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b), true
		}
	}
	return "", false
}

func decodeHex(s string) (string, bool) {
	b, err := hex.DecodeString(spaces.Replace(s))
	return string(b), err == nil
}

func decodeBase32(s string) (string, bool) {
	b, err := base32.StdEncoding.DecodeString(spaces.Replace(s))
	return string(b), err == nil
}

// trFunc implements tr SET1 SET2 and tr -d SET for literal sets.
func trFunc(args []arg) func(string) (string, bool) {
	var sets []string
	del := false
	for _, a := range args[1:] {
		switch {
		case strings.HasPrefix(a.e, "-") && len(a.e) > 1:
			// -d, --delete and a cluster holding d delete.
			if strings.Contains(a.e, "d") {
				del = true
			}
			if strings.Contains(a.e, "c") {
				return nil
			}
		default:
			sets = append(sets, a.e)
		}
	}
	expand := func(s string) []rune {
		s = echoEscapes(s)
		if strings.Contains(s, "[:") {
			return nil
		}
		r := []rune(s)
		var out []rune
		for i := 0; i < len(r); i++ {
			lo, hi := r[i], r[i]
			if i+2 < len(r) && r[i+1] == '-' && r[i] <= r[i+2] && r[i+2]-r[i] < 1024 {
				hi = r[i+2] // a range, a-z
				i += 2
			}
			for c := lo; c <= hi; c++ {
				out = append(out, c)
			}
		}
		return out
	}
	var from, to []rune
	switch {
	case del && len(sets) >= 1:
		from = expand(sets[0])
	case len(sets) == 2:
		if from, to = expand(sets[0]), expand(sets[1]); len(to) == 0 {
			return nil
		}
	}
	if from == nil {
		return nil
	}
	return func(s string) (string, bool) {
		return strings.Map(func(r rune) rune {
			i := slices.Index(from, r)
			switch {
			case i < 0:
				return r
			case del:
				return -1
			}
			return to[min(i, len(to)-1)]
		}, s), true
	}
}

// echoData is echo's output; dash's echo applies escapes always, bash's
// only with -e, so both readings are kept when they differ.
func echoData(args []arg) *data {
	newline, escapes := true, false
	for len(args) > 0 {
		a := args[0].e
		if len(a) < 2 || a[0] != '-' || strings.Trim(a[1:], "neE") != "" {
			break
		}
		if strings.Contains(a, "n") {
			newline = false
		}
		if strings.Contains(a, "e") {
			escapes = true
		}
		args = args[1:]
	}
	d := joinData(args, " ")
	if newline {
		d.texts[0] += "\n"
	}
	if esc := echoEscapes(d.texts[0]); escapes {
		d.texts[0] = esc
	} else if esc != d.texts[0] {
		d.texts = append(d.texts, esc)
	}
	return d
}

// printfData is printf's output for %s %b %c %d and friends.
func printfData(args []arg) *data {
	if len(args) == 0 {
		return &data{texts: []string{""}}
	}
	format := args[0].p
	rest := args[1:]
	var origins originSet
	for _, a := range args {
		origins |= a.origins
	}
	var b strings.Builder
	next := 0
	for round := 0; round < 64; round++ {
		usedArg := false
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c == '\\' {
				n, t := printfEscape(format[i:])
				b.WriteString(t)
				i += n - 1
				continue
			}
			if c != '%' || i+1 >= len(format) {
				b.WriteByte(c)
				continue
			}
			// The verb after the flags, width and precision.
			spec := strings.TrimLeft(format[i+1:], "-+ #0123456789.*'")
			if spec == "" {
				b.WriteString(format[i:])
				break
			}
			verb := spec[0]
			flags := format[i+1 : len(format)-len(spec)]
			i = len(format) - len(spec)
			if verb == '%' {
				b.WriteByte('%')
				continue
			}
			arg := ""
			if next < len(rest) {
				arg = rest[next].p
				next++
				usedArg = true
			}
			switch verb {
			case 'b':
				b.WriteString(echoEscapes(arg))
			case 'c':
				if arg != "" {
					r, _ := utf8.DecodeRuneInString(arg)
					b.WriteRune(r)
				}
			case 'd', 'i', 'u':
				v, err := strconv.ParseInt(strings.TrimSpace(arg), 0, 64)
				if err != nil && len(arg) > 1 && (arg[0] == '\'' || arg[0] == '"') {
					r, _ := utf8.DecodeRuneInString(arg[1:])
					v, err = int64(r), nil
				}
				if err == nil || arg == "" {
					b.WriteString(strconv.FormatInt(v, 10))
				}
			case 'o', 'x', 'X':
				v, _ := strconv.ParseInt(strings.TrimSpace(arg), 0, 64)
				fmt.Fprintf(&b, "%"+string(verb), v) // (Go's %o, %x and %X are printf's)
			default:
				// %.Ns prints N bytes of the argument: '../%.0s' 1 2 is ../../.
				if _, prec, ok := strings.Cut(flags, "."); ok && !strings.Contains(prec, "*") {
					if n, err := strconv.Atoi(prec); err == nil || prec == "" {
						arg = arg[:min(max(n, 0), len(arg))]
					}
				}
				b.WriteString(arg)
			}
		}
		if !usedArg || next >= len(rest) {
			break
		}
	}
	return &data{texts: []string{b.String()}, origins: origins}
}
