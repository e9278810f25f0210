package scrub

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"strings"
	"testing"
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

// gzipped and zlibbed compress a document as gzip and zlib write it.
func gzipped(d string) []byte {
	return compressWith(d, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
}

func zlibbed(d string) []byte {
	return compressWith(d, func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) })
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
// base64 or hex run (lines joined), decoded, gunzipped or un-zlibbed.
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
			var dec []byte
			if hexRuns {
				dec, _ = hex.DecodeString(run[:len(run)/2*2])
			} else {
				dec, _ = base64.RawStdEncoding.DecodeString(strings.TrimRight(run, "="))
			}
			for _, open := range []func(io.Reader) (io.Reader, error){
				func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
				func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) },
			} {
				if zr, err := open(bytes.NewReader(dec)); err == nil {
					b, _ := io.ReadAll(zr)
					out.Write(b)
				}
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
	} {
		if out := s.Scrub(in); out != in {
			t.Errorf("benign text changed:\n in: %.120q\nout: %.120q", in, out)
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
		for _, enc := range []string{wrap(text+secret, width), wrap(base64.StdEncoding.EncodeToString([]byte(text+"\n"+secret+"\n")), 76)} {
			if got := s.Scrub(enc); strings.Contains(joinLines(got), secret) {
				t.Fatalf("secret left in %q", got)
			}
		}
	})
}

// A compressed stream is inflated only as far as the decoding budget: a
// bomb (16 MiB of zeros in 16 KiB) costs about the budget, and a secret
// inside the budget is still found.
func TestInflateWithinBudget(t *testing.T) {
	const known = "Zk3p_Known-Secret.7781qW"
	s := newTestScrubber(t, map[string]string{"API_KEY": known})
	bomb := base64.StdEncoding.EncodeToString(gzipped("X=" + known + "\n" + strings.Repeat("\x00", 16<<20)))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out := s.Scrub(bomb)
	runtime.ReadMemStats(&after)
	if strings.Contains(inflating(false)(out), known) {
		t.Errorf("secret at the start of a bomb leaked")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Errorf("scrubbing a %d-byte bomb allocated %d MiB", len(bomb), n>>20)
	}
}

// inflated's first-character filter passes every compressed stream's base64:
// each header compressedHead accepts starts its base64 with one of them.
func TestCompressedHeadBase64Letters(t *testing.T) {
	for b0 := range 256 {
		for b1 := range 256 {
			h := []byte{byte(b0), byte(b1), 8}
			if !compressedHead(h) {
				continue
			}
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				if c := enc.EncodeToString(h)[0]; !strings.ContainsRune("CGHKOSWae", rune(c)) {
					t.Fatalf("% x starts base64 with %q, which the filter drops", h, c)
				}
			}
		}
	}
}
