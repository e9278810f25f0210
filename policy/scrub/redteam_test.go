package scrub

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"strings"
	"testing"

	dsbzip2 "github.com/dsnet/compress/bzip2"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Red-team encodings (branch redteam): a secret the call used (known) and
// provider tokens our rules know, written in the encodings tool output
// carries them in: escaped, encoded, wrapped, embedded at any offset of a
// larger encoded document, split across lines. After scrubbing, decoding
// the output the same way must not give the secret back. Every secret here
// is made up.

// redTeamEncoding writes a document holding a secret, and reads back what a
// reader of the scrubbed output could decode from it.
type redTeamEncoding struct {
	name   string
	encode func(doc string) string
	decode func(out string) string
}

func joinLines(s string) string {
	return strings.NewReplacer("\r", "", "\n", "").Replace(s)
}

// b64Tolerant decodes every maximal base64 run of s (lines joined) at every
// alignment, so that a secret left in part of a run is still read back.
func b64Tolerant(enc *base64.Encoding) func(string) string {
	return func(s string) string {
		s = joinLines(s)
		var out strings.Builder
		isB64 := func(c byte) bool {
			return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
		}
		for i := 0; i < len(s); {
			if !isB64(s[i]) {
				i++
				continue
			}
			j := i
			for j < len(s) && isB64(s[j]) {
				j++
			}
			run := s[i:j]
			for off := 0; off < 4 && off < len(run); off++ {
				r := run[off:]
				r = r[:len(r)/4*4]
				if b, err := enc.Strict().DecodeString(strings.TrimRight(r, "=")); err == nil {
					out.Write(b)
				} else if b, err := enc.WithPadding(base64.NoPadding).DecodeString(r); err == nil {
					out.Write(b)
				}
				out.WriteByte('\n')
			}
			i = j
		}
		return out.String()
	}
}

func hexTolerant(s string) string {
	s = strings.NewReplacer(" ", "", "\n", "", "\r", "", ":", "").Replace(s)
	var out strings.Builder
	for off := 0; off < 2; off++ {
		r := s[off:]
		for i := 0; i+2 <= len(r); i += 2 {
			if b, err := hex.DecodeString(r[i : i+2]); err == nil {
				out.Write(b)
			} else {
				out.WriteByte('?')
			}
		}
		out.WriteByte('\n')
	}
	return out.String()
}

func wrap(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); i += n {
		b.WriteString(s[i:min(len(s), i+n)])
		b.WriteByte('\n')
	}
	return b.String()
}

// gzipped, zlibbed, bzipped, xzed and zstded compress a document as each
// format's writer does (xz and zstd at their default settings: an 8 MiB
// dictionary, level 3).
func gzipped(d string) []byte {
	return compressWith(d, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
}

func zlibbed(d string) []byte {
	return compressWith(d, func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })
}

func bzipped(d string) []byte {
	return compressWith(d, must(func(w io.Writer) (io.WriteCloser, error) { return dsbzip2.NewWriter(w, nil) }))
}

func xzed(d string) []byte {
	return compressWith(d, must(func(w io.Writer) (io.WriteCloser, error) { return xz.NewWriter(w) }))
}

func zstded(d string) []byte {
	return compressWith(d, must(func(w io.Writer) (io.WriteCloser, error) { return zstd.NewWriter(w) }))
}

// must opens a writer whose options are fixed, so that it cannot fail.
func must(open func(io.Writer) (io.WriteCloser, error)) func(io.Writer) io.WriteCloser {
	return func(w io.Writer) io.WriteCloser {
		zw, err := open(w)
		if err != nil {
			panic(err)
		}
		return zw
	}
}

// compressors are the writers above, by name.
var compressors = []struct {
	name     string
	compress func(string) []byte
}{{"gzip", gzipped}, {"zlib", zlibbed}, {"bzip2", bzipped}, {"xz", xzed}, {"zstd", zstded}}

// uncompressed reads back what a reader makes of dec in any of the five
// formats.
func uncompressed(dec []byte) []byte {
	var out []byte
	for _, open := range []func(io.Reader) (io.Reader, error){
		func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
		func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) },
		func(r io.Reader) (io.Reader, error) { return dsbzip2.NewReader(r, nil) },
		func(r io.Reader) (io.Reader, error) { return xz.NewReader(r) },
		func(r io.Reader) (io.Reader, error) { return zstd.NewReader(r) },
	} {
		if zr, err := open(bytes.NewReader(dec)); err == nil {
			b, _ := io.ReadAll(zr)
			out = append(out, b...)
		}
	}
	return out
}

func compressWith(d string, open func(io.Writer) io.WriteCloser) []byte {
	var b bytes.Buffer
	w := open(&b)
	io.WriteString(w, d)
	w.Close()
	return b.Bytes()
}

// tarLike is a document as tar writes it: a header block with NULs, then
// the file.
func tarLike(d string) string {
	hdr := ".env" + strings.Repeat("\x00", 96) + "0000644\x000001750\x00ustar\x0000"
	return hdr + strings.Repeat("\x00", 512-len(hdr)) + "HOME=/home/app\nAPI_KEY=" + d + "\nLANG=C\n"
}

// inflating reads back what a reader could inflate from the output: every
// base64 or hex run (lines joined), decoded and uncompressed.
func inflating(hexRuns bool) func(string) string {
	return func(o string) string {
		o = joinLines(o)
		var out strings.Builder
		for _, run := range strings.FieldsFunc(o, func(r rune) bool {
			if hexRuns {
				return !strings.ContainsRune("0123456789abcdefABCDEF", r)
			}
			return !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_", r)
		}) {
			if hexRuns {
				dec, _ := hex.DecodeString(run[:len(run)/2*2])
				out.Write(uncompressed(dec))
				continue
			}
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				dec, _ := enc.DecodeString(strings.TrimRight(run, "="))
				out.Write(uncompressed(dec))
			}
		}
		return out.String() + o
	}
}

var redTeamEncodings = []redTeamEncoding{
	{"raw", func(d string) string { return d }, func(o string) string { return o }},
	{"json-escaped, every byte", func(d string) string {
		var b strings.Builder
		for i := 0; i < len(d); i++ {
			fmt.Fprintf(&b, `\u%04x`, d[i])
		}
		return `{"out":"` + b.String() + `"}`
	}, func(o string) string { u, _ := unescape(o); return u.text + o }},
	{"url-encoded, every byte", func(d string) string {
		var b strings.Builder
		for i := 0; i < len(d); i++ {
			fmt.Fprintf(&b, "%%%02X", d[i])
		}
		return "https://example.com/cb?d=" + b.String()
	}, func(o string) string { u, _ := unescape(o); return u.text + o }},
	{"url-encoded twice", func(d string) string {
		return "next=" + url.QueryEscape(url.QueryEscape(d))
	}, func(o string) string { u, _ := unescape(o); return u.text + o }},
	{"html entities", func(d string) string {
		var b strings.Builder
		for i := 0; i < len(d); i++ {
			fmt.Fprintf(&b, "&#x%x;", d[i])
		}
		return "<p>" + b.String() + "</p>"
	}, func(o string) string { u, _ := unescape(o); return u.text + o }},
	{"base64", func(d string) string { return base64.StdEncoding.EncodeToString([]byte(d)) }, b64Tolerant(base64.StdEncoding)},
	{"base64url", func(d string) string { return base64.RawURLEncoding.EncodeToString([]byte(d)) }, b64Tolerant(base64.URLEncoding)},
	{"base64 at offset 1", func(d string) string { return base64.StdEncoding.EncodeToString([]byte("=" + d)) }, b64Tolerant(base64.StdEncoding)},
	{"base64 at offset 2", func(d string) string { return base64.StdEncoding.EncodeToString([]byte("x=" + d)) }, b64Tolerant(base64.StdEncoding)},
	{"base64 of an env file, wrapped at 76", func(d string) string {
		doc := "HOME=/home/app\nPATH=/usr/bin:/bin\nLANG=C.UTF-8\nSHLVL=1\nX=" + d + "\nTERM=xterm\n"
		return wrap(base64.StdEncoding.EncodeToString([]byte(doc)), 76)
	}, b64Tolerant(base64.StdEncoding)},
	{"base64 wrapped at 64 with CRLF", func(d string) string {
		return strings.ReplaceAll(wrap(base64.StdEncoding.EncodeToString([]byte("token: "+d+"\n")), 64), "\n", "\r\n")
	}, b64Tolerant(base64.StdEncoding)},
	{"hex", func(d string) string { return hex.EncodeToString([]byte(d)) }, hexTolerant},
	{"hex upper, at offset 1", func(d string) string { return strings.ToUpper(hex.EncodeToString([]byte("=" + d))) }, hexTolerant},
	{"hex wrapped at 60 (xxd -p)", func(d string) string { return wrap(hex.EncodeToString([]byte("secret="+d)), 60) }, hexTolerant},
	{"gzip | base64", func(d string) string { return base64.StdEncoding.EncodeToString(gzipped("token: " + d + "\n")) }, inflating(false)},
	{"tar czf - .env | base64, wrapped at 76", func(d string) string {
		return wrap(base64.StdEncoding.EncodeToString(gzipped(tarLike(d))), 76)
	}, inflating(false)},
	{"zlib | base64", func(d string) string { return `{"blob":"` + base64.StdEncoding.EncodeToString(zlibbed("X="+d)) + `"}` }, inflating(false)},
	{"gzip | xxd -p", func(d string) string { return wrap(hex.EncodeToString(gzipped(tarLike(d))), 60) }, inflating(true)},
	{"bzip2 | base64", func(d string) string { return base64.StdEncoding.EncodeToString(bzipped("token: " + d + "\n")) }, inflating(false)},
	{"tar cjf - .env | xxd -p", func(d string) string { return wrap(hex.EncodeToString(bzipped(tarLike(d))), 60) }, inflating(true)},
	{"tar cJf - .env | base64, wrapped at 76", func(d string) string {
		return wrap(base64.StdEncoding.EncodeToString(xzed(tarLike(d))), 76)
	}, inflating(false)},
	{"xz | base64url", func(d string) string { return base64.RawURLEncoding.EncodeToString(xzed("X=" + d)) }, inflating(false)},
	{"xz | xxd -p", func(d string) string { return wrap(hex.EncodeToString(xzed("token: "+d+"\n")), 60) }, inflating(true)},
	{"zstd | base64", func(d string) string { return base64.StdEncoding.EncodeToString(zstded("token: " + d + "\n")) }, inflating(false)},
	{"tar --zstd -cf - .env | base64, wrapped at 76", func(d string) string {
		return wrap(base64.StdEncoding.EncodeToString(zstded(tarLike(d))), 76)
	}, inflating(false)},
	{"zstd | xxd -p", func(d string) string { return wrap(hex.EncodeToString(zstded("X="+d)), 60) }, inflating(true)},
	{"base64 of text that starts like a zlib header", func(d string) string {
		return base64.StdEncoding.EncodeToString([]byte("x^ token: " + d))
	}, b64Tolerant(base64.StdEncoding)},
	{"wrapped at 10 (fold -w 10)", func(d string) string { return wrap("value="+d, 10) }, joinLines},
	{"split in two lines", func(d string) string { return d[:len(d)/2] + "\n" + d[len(d)/2:] }, joinLines},
	{"split with CRLF", func(d string) string { return d[:len(d)/3] + "\r\n" + d[len(d)/3:] }, joinLines},
}

// TestRedTeamEncodedSecrets: every encoding of a known value, and of
// provider tokens the rules know, is redacted.
func TestRedTeamEncodedSecrets(t *testing.T) {
	const known = "Zk3p_Known-Secret.7781qW"
	tokens := []string{
		known,
		"ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
		"xoxb-123456789012-1234567890123-aBcDeFgHiJkLmNoPqRsTuVwX",
		"sk_live_51HxYzAbCdEfGhIjKlMnOpQrStUv",
		"AKIAQ3EGRTVXZ7KLMN2P",
	}
	s := newTestScrubber(t, map[string]string{"API_KEY": known})
	leaks := 0
	for _, tok := range tokens {
		for _, e := range redTeamEncodings {
			in := e.encode(tok)
			out := s.Scrub(in)
			if strings.Contains(e.decode(out), tok) {
				leaks++
				t.Errorf("%s of %.12s…: leaked\n in: %.160q\nout: %.160q", e.name, tok, in, out)
			}
		}
	}
	t.Logf("%d secrets × %d encodings, %d leaked", len(tokens), len(redTeamEncodings), leaks)
}

// TestRedTeamEncodedInJSON: the same encodings as a tool's output reaches
// the scrubber, inside a JSON string, where every line break is the two
// characters \n (or \r\n) and a slash may be \/: wrapped base64 and hex, a
// compressed archive, a known value folded over lines.
func TestRedTeamEncodedInJSON(t *testing.T) {
	const known = "Zk3p_Known-Secret.7781qW"
	tokens := []string{known, "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "AKIAQ3EGRTVXZ7KLMN2P"}
	s := newTestScrubber(t, map[string]string{"API_KEY": known})
	leaks := 0
	for _, tok := range tokens {
		for _, e := range redTeamEncodings {
			for _, style := range []string{"lf", "crlf", `lf, \/`} {
				stdout := e.encode(tok)
				if style == "crlf" {
					stdout = strings.ReplaceAll(strings.ReplaceAll(stdout, "\r\n", "\n"), "\n", "\r\n")
				}
				in, _ := json.Marshal(map[string]any{"exit_code": 0, "stdout": stdout, "stderr": ""})
				if style == `lf, \/` { // as PHP's json_encode writes a slash
					in = bytes.ReplaceAll(in, []byte("/"), []byte(`\/`))
				}
				out := s.Scrub(string(in))
				var got struct{ Stdout string }
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					got.Stdout = out // the scrubbed text is read as it is
				}
				if strings.Contains(e.decode(got.Stdout), tok) {
					leaks++
					t.Errorf("%s of %.12s… in JSON (%s): leaked\n in: %.160s\nout: %.160s", e.name, tok, style, in, out)
				}
			}
		}
	}
	t.Logf("%d secrets × %d encodings × 3 styles of JSON, %d leaked", len(tokens), len(redTeamEncodings), leaks)
}

// TestRedTeamEncodedBenign: the decoders' look-alikes stay as they are:
// base64 and hex of ordinary text, wrapped lines, image data.
func TestRedTeamEncodedBenign(t *testing.T) {
	s := newTestScrubber(t, map[string]string{"API_KEY": "Zk3p_Known-Secret.7781qW"})
	for _, in := range []string{
		base64.StdEncoding.EncodeToString([]byte("hello world, this is ordinary text in base64")),
		wrap(base64.StdEncoding.EncodeToString([]byte(strings.Repeat("lorem ipsum dolor sit amet ", 20))), 76),
		hex.EncodeToString([]byte("just some bytes, nothing secret here at all")),
		base32.StdEncoding.EncodeToString([]byte("ordinary")),
		base64.StdEncoding.EncodeToString(gzipped(strings.Repeat("an ordinary compressed log line\n", 10))),
		wrap(hex.EncodeToString(zlibbed("nothing secret in here either")), 60),
		"commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: A <a@example.com>",
		wrap(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 5), 10),
		base64.StdEncoding.EncodeToString(xzed(strings.Repeat("an ordinary compressed log line\n", 10))),
		wrap(hex.EncodeToString(zstded("nothing secret in here either")), 60),
		wrap(base64.StdEncoding.EncodeToString(bzipped(strings.Repeat("lorem ipsum dolor sit amet ", 20))), 76),
		"printf(\"%s\\n\", name);\nfputs(\"done\\r\\n\", stderr);",
	} {
		if out := s.Scrub(in); out != in {
			t.Errorf("benign text changed:\n in: %.120q\nout: %.120q", in, out)
		}
		// As a tool's output reaches the scrubber: in a JSON string.
		j, _ := json.Marshal(map[string]string{"stdout": in})
		if out := s.Scrub(string(j)); out != string(j) {
			t.Errorf("benign JSON changed:\n in: %.120s\nout: %.120s", j, out)
		}
	}
}

// FuzzScrubEncoded: whatever the text, the joined and decoded views never
// panic, redact inside the text, and scrubbing is idempotent; a known value
// written in base64 or folded over lines is never left whole.
func FuzzScrubEncoded(f *testing.F) {
	f.Add("X=Zk3p_Known-Secret.7781qW\n", "Zk3p_Known-Secret.7781qW", 10)
	f.Add(wrap(base64.StdEncoding.EncodeToString([]byte("a=ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n")), 76), "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", 7)
	f.Add("4142\r\n4344==\n\n=", "ABCDEFGH", 3)
	f.Add(wrap(base64.StdEncoding.EncodeToString(gzipped("k=Zk3p_Known-Secret.7781qW\n")), 76), "Zk3p_Known-Secret.7781qW", 5)
	f.Add(hex.EncodeToString(zlibbed("H4sI"))+"\n"+base64.StdEncoding.EncodeToString([]byte{0x1f, 0x8b, 8, 0, 1, 2}), "H4sIAAAAAAAA", 9)
	f.Add(`{"stdout":"`+strings.ReplaceAll(wrap(base64.StdEncoding.EncodeToString(xzed("k=Zk3p_Known-Secret.7781qW\n")), 76), "\n", `\r\n`)+`"}`, "Zk3p_Known-Secret.7781qW", 8)
	f.Add(base64.StdEncoding.EncodeToString(bzipped("k=Zk3p_Known-Secret.7781qW\n"))+"\n"+hex.EncodeToString(xzed("QlpoOTFBWSZTWQ")), "Zk3p_Known-Secret.7781qW", 6)
	f.Add(hex.EncodeToString(zstded("k=Zk3p_Known-Secret.7781qW\n"))+" "+base64.RawURLEncoding.EncodeToString([]byte("\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46\x02\xc0\xff")), "Zk3p_Known-Secret.7781qW", 11)
	f.Fuzz(func(t *testing.T, text, secret string, width int) {
		if len(secret) < minKnownLen || len(secret) > 64 || strings.ContainsAny(secret, "\r\n \t\x00") || len(text) > 1<<14 {
			return
		}
		s, err := New(map[string]string{"K": secret}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := s.Scrub(text)
		if again := s.Scrub(out); again != out {
			t.Fatalf("not idempotent:\n%q\n%q", out, again)
		}
		width = 4 + (width%40+40)%40
		for _, enc := range []string{
			wrap(text+secret, width),
			wrap(base64.StdEncoding.EncodeToString([]byte(text+"\n"+secret+"\n")), 76),
			strings.ReplaceAll(wrap(text+secret, width), "\n", `\n`), // folded in a JSON string
		} {
			if got := s.Scrub(enc); strings.Contains(joinLines(got), secret) {
				t.Fatalf("secret left in %q", got)
			}
		}
	})
}

// A compressed stream is inflated only as far as the decoding budget: a
// bomb (4 or 16 MiB of zeros, in 22 KiB or less) costs about the budget plus the
// decoder's own state (xz's 8 MiB dictionary, bzip2's 3.6 MB block), and a
// secret inside the budget is still found.
func TestInflateWithinBudget(t *testing.T) {
	const known = "Zk3p_Known-Secret.7781qW"
	s := newTestScrubber(t, map[string]string{"API_KEY": known})
	limits := map[string]uint64{"gzip": 16 << 20, "zlib": 16 << 20, "bzip2": 12 << 20, "xz": 20 << 20, "zstd": 20 << 20}
	for _, c := range compressors {
		size := 16 << 20
		if c.name != "gzip" && c.name != "zlib" {
			size = 4 << 20 // four times the budget; their writers are slow under -race
		}
		bomb := base64.StdEncoding.EncodeToString(c.compress("X=" + known + "\n" + strings.Repeat("\x00", size)))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out := s.Scrub(bomb)
		runtime.ReadMemStats(&after)
		if strings.Contains(inflating(false)(out), known) {
			t.Errorf("%s: secret at the start of a bomb leaked", c.name)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > limits[c.name] {
			t.Errorf("%s: scrubbing a %d-byte bomb allocated %d MiB, want at most %d", c.name, len(bomb), n>>20, limits[c.name]>>20)
		} else {
			t.Logf("%s: %d-byte bomb, %.1f MiB allocated", c.name, len(bomb), float64(n)/(1<<20))
		}
	}
}

// inflated's first-character filter passes every compressed stream's base64:
// each header compressedHead accepts starts its base64 with one of them.
func TestCompressedHeadBase64Letters(t *testing.T) {
	heads := [][]byte{[]byte("\xfd7zXZ\x00"), []byte("\x28\xb5\x2f\xfd\x00\x00")}
	for l := byte('1'); l <= '9'; l++ {
		heads = append(heads, []byte{'B', 'Z', 'h', l, 0x31, 0x41})
	}
	for b0 := range 256 {
		for b1 := range 256 {
			heads = append(heads, []byte{byte(b0), byte(b1), 8, 0, 0, 0})
		}
	}
	seen := map[format]bool{}
	for _, h := range heads {
		f := compressedHead(h)
		if f == notCompressed {
			continue
		}
		seen[f] = true
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			if b := enc.EncodeToString(h); !strings.ContainsRune(compressedLetters, rune(b[0])) || !compressedBase64Start(b) {
				t.Fatalf("% x starts base64 with %q, which the filter drops", h, b[:4])
			}
		}
	}
	if len(seen) != 5 {
		t.Errorf("formats told from these heads: %v, want all five", seen)
	}
	for _, path := range []string{"/usr/local/lib/python3", "_build_output_dir", "QueueSizeExceeded"} {
		if compressedBase64Start(path) {
			t.Errorf("%q passes the filter", path)
		}
	}
}
