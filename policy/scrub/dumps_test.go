package scrub

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var updateEncodings = flag.Bool("update-encodings", false, "rewrite testdata/encodings from the format writers")

// encodingsSecret is the known value of the encodings corpus (made up).
const encodingsSecret = "Zk3p_Known-Secret.7781qW"

// encodingCase writes a document in one tool's format and reads back,
// tolerantly, what a reader of the (scrubbed) output could get from it.
type encodingCase struct {
	name   string
	encode func(doc []byte) string
	read   func(out string) string
}

var (
	reOffset = regexp.MustCompile(`^[0-9a-fA-F]{6,}:?(\s|$)`)
	reWord   = regexp.MustCompile(`(?:0[xX]|\\x)?[0-9a-fA-F]+|-?[0-9]+`)
)

// dumpRead reads a dump's numbers back line by line (offsets and text
// columns dropped) in the reading named, and its text columns joined.
func dumpRead(reading string) func(string) string {
	return func(out string) string {
		var nums, cols strings.Builder
		for _, line := range strings.Split(out, "\n") {
			line = reOffset.ReplaceAllString(line, "")
			if j := strings.IndexByte(line, '|'); j >= 0 {
				cols.WriteString(strings.Trim(line[j:], "|"))
				line = line[:j]
			} else if j := strings.LastIndex(line, "  "); j >= 0 && strings.TrimSpace(line[j:]) != "" && !allNumberish(strings.TrimSpace(line[j:])) {
				cols.WriteString(strings.TrimSpace(line[j:]))
				line = line[:j]
			}
			for _, w := range reWord.FindAllString(line, -1) {
				w = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(w, "0x"), "0X"), `\x`)
				switch reading {
				case "hex":
					for i := 0; i+2 <= len(w); i += 2 {
						v, _ := strconv.ParseUint(w[i:i+2], 16, 8)
						nums.WriteByte(byte(v))
					}
				case "hexle":
					for i := len(w) - 2; i >= 0; i -= 2 {
						v, _ := strconv.ParseUint(w[i:i+2], 16, 8)
						nums.WriteByte(byte(v))
					}
				case "oct", "dec":
					base := 8
					if reading == "dec" {
						base = 10
					}
					v, _ := strconv.ParseInt(w, base, 32)
					nums.WriteByte(byte(v))
					if len(w) == 6 {
						nums.WriteByte(byte(v >> 8))
					}
				}
			}
		}
		return nums.String() + "\n" + cols.String()
	}
}

// charsRead removes a separator (and line breaks) between characters.
func charsRead(sep string) func(string) string {
	return func(out string) string { return strings.NewReplacer(sep, "", "\n", "").Replace(out) }
}

// odCharsRead reads od -c back: the fields of each line after its offset.
func odCharsRead(out string) string {
	var b strings.Builder
	for _, line := range strings.Split(out, "\n") {
		line = reOffset.ReplaceAllString(line, " ")
		for p := 0; p+4 <= len(line)+1; p += 4 {
			f := line[p:min(len(line), p+4)]
			if c, ok := odField(f); ok {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

func base32Read(enc *base32.Encoding) func(string) string {
	return func(out string) string {
		var b strings.Builder
		run := strings.TrimRight(joinLines(out), "=")
		for off := 0; off < 8 && off < len(run); off++ {
			d, _ := enc.WithPadding(base32.NoPadding).DecodeString(base32Whole(run[off:]))
			b.Write(d)
			b.WriteByte('\n')
		}
		return b.String()
	}
}

func utf16Read(out string) string { return strings.ReplaceAll(out, "\x00", "") }

var encodingCases = []encodingCase{
	{"xxd", func(d []byte) string { return xxdDump(d, 2, 16, false) }, dumpRead("hex")},
	{"xxd -u", func(d []byte) string { return xxdDump(d, 2, 16, true) }, dumpRead("hex")},
	{"xxd -g1", func(d []byte) string { return xxdDump(d, 1, 16, false) }, dumpRead("hex")},
	{"xxd -g1 -c 8", func(d []byte) string { return xxdDump(d, 1, 8, false) }, dumpRead("hex")},
	{"xxd -c 32", func(d []byte) string { return xxdDump(d, 2, 32, false) }, dumpRead("hex")},
	{"xxd -g4 -c 12", func(d []byte) string { return xxdDump(d, 4, 12, false) }, dumpRead("hex")},
	{"xxd -g8", func(d []byte) string { return xxdDump(d, 8, 16, false) }, dumpRead("hex")},
	{"hexdump -C", func(d []byte) string { return hexdumpC(d, false) }, dumpRead("hex")},
	{"hexdump -C -v", func(d []byte) string { return hexdumpC(d, true) }, dumpRead("hex")},
	{"hexdump", func(d []byte) string { return hexdumpWords(d, false) }, dumpRead("hexle")},
	{"od -x", func(d []byte) string { return hexdumpWords(d, true) }, dumpRead("hexle")},
	{"od", func(d []byte) string { return odDump(d, "o2", true) }, dumpRead("oct")},
	{"od -c", func(d []byte) string { return odDump(d, "c", true) }, odCharsRead},
	{"od -An -c", func(d []byte) string { return odDump(d, "c", false) }, odCharsRead},
	{"od -An -tx1", func(d []byte) string { return odDump(d, "x1", false) }, dumpRead("hex")},
	{"od -t x1", func(d []byte) string { return odDump(d, "x1", true) }, dumpRead("hex")},
	{"od -t o1", func(d []byte) string { return odDump(d, "o1", true) }, dumpRead("oct")},
	{"od -b -An", func(d []byte) string { return odDump(d, "o1", false) }, dumpRead("oct")},
	{"od -t d1", func(d []byte) string { return odDump(d, "d1", true) }, dumpRead("dec")},
	{"od -t u1", func(d []byte) string { return odDump(d, "u1", true) }, dumpRead("dec")},
	{"base32", func(d []byte) string { return base32Wrapped(d, false) }, base32Read(base32.StdEncoding)},
	{"base32hex", func(d []byte) string { return base32Wrapped(d, true) }, base32Read(base32.HexEncoding)},
	{"base32, one line", func(d []byte) string { return base32.StdEncoding.EncodeToString(d) }, base32Read(base32.StdEncoding)},
	{"iconv -t UTF-16", func(d []byte) string { return utf16Text(string(d), "UTF-16") }, utf16Read},
	{"iconv -t UTF-16LE", func(d []byte) string { return utf16Text(string(d), "UTF-16LE") }, utf16Read},
	{"iconv -t UTF-16BE", func(d []byte) string { return utf16Text(string(d), "UTF-16BE") }, utf16Read},
	{"rev | base64", func(d []byte) string { return revBase64(string(d)) }, func(o string) string {
		b, _ := base64.StdEncoding.DecodeString(strings.TrimSpace(o))
		return reversed(string(b)) + reversed(b64Tolerant(base64.StdEncoding)(o))
	}},
	{"rev", func(d []byte) string { return reversed(string(d)) }, reversed},
	{"colon-separated hex", func(d []byte) string { return joinedUnits(d, "%02x", ":") }, dumpRead("hex")},
	{"space-separated hex", func(d []byte) string { return joinedUnits(d, "%02x", " ") }, dumpRead("hex")},
	{"0x, comma-separated", func(d []byte) string { return joinedUnits(d, "0x%02x", ", ") }, dumpRead("hex")},
	{"0X, comma", func(d []byte) string { return joinedUnits(d, "0X%02X", ",") }, dumpRead("hex")},
	{`\x escapes`, func(d []byte) string { return joinedUnits(d, `\x%02x`, "") }, dumpRead("hex")},
	{"percent escapes", func(d []byte) string { return joinedUnits(d, "%%%02X", "") }, func(o string) string { u, _ := unescape(o); return u.text + o }},
	{"decimal array", func(d []byte) string { return "[" + joinedUnits(d, "%d", ",") + "]" }, dumpRead("dec")},
	{"decimal, comma-space", func(d []byte) string { return joinedUnits(d, "%d", ", ") }, dumpRead("dec")},
	{"characters, spaced", func(d []byte) string { return joinedUnits(d, "%c", " ") }, charsRead(" ")},
	{"characters, commas", func(d []byte) string { return joinedUnits(d, "%c", ",") }, charsRead(",")},
	{"characters, colons", func(d []byte) string { return joinedUnits(d, "%c", ":") }, charsRead(":")},
	{"characters, JSON array", func(d []byte) string { return `["` + joinedUnits(d, "%c", `","`) + `"]` }, charsRead(`","`)},
	{"characters, spaced, folded", func(d []byte) string { return wrap(joinedUnits(d, "%c", " "), 20) }, charsRead(" ")},
}

// encodingDocs are the documents the secret is written in: alone with a
// line break (echo $KEY | xxd), and in an env file.
func encodingDocs(secret string) [][]byte {
	return [][]byte{
		[]byte(secret + "\n"),
		[]byte("HOME=/home/app\nLANG=C.UTF-8\nAPI_KEY=" + secret + "\nTERM=xterm\n"),
	}
}

func encodingFile(name string) string {
	return filepath.Join("testdata", "encodings", strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, name)+".txt")
}

// TestEncodingsCorpus: the corpus in testdata/encodings is what the format
// writers make of the documents (regenerate with -update-encodings), and
// each encoding of the known value, as raw output and inside a tool's JSON
// result, is redacted: reading the output back the same way does not give
// the value.
func TestEncodingsCorpus(t *testing.T) {
	s := newTestScrubber(t, map[string]string{"API_KEY": encodingsSecret})
	leaks := 0
	for _, c := range encodingCases {
		var fixture strings.Builder
		for _, doc := range encodingDocs(encodingsSecret) {
			fixture.WriteString(c.encode(doc))
			fixture.WriteString("\n--\n")
		}
		checkGolden(t, encodingFile(c.name), fixture.String())
		for _, doc := range encodingDocs(encodingsSecret) {
			in := c.encode(doc)
			if !strings.Contains(c.read(in), encodingsSecret) {
				t.Fatalf("%s: the reader does not read the fixture back", c.name)
			}
			out := s.Scrub(in)
			if strings.Contains(c.read(out), encodingsSecret) {
				leaks++
				t.Errorf("%s: leaked\n in: %q\nout: %q", c.name, in, out)
			}
			// As the daemon scrubs a shell tool's output.
			j, _ := json.Marshal(map[string]any{"exit_code": 0, "stdout": strings.ToValidUTF8(in, "\uFFFD"), "stderr": ""})
			jout := s.Scrub(string(j))
			var got struct{ Stdout string }
			if err := json.Unmarshal([]byte(jout), &got); err != nil {
				t.Errorf("%s in JSON: scrubbed JSON is not valid: %v\n%s", c.name, err, jout)
				continue
			}
			if strings.Contains(c.read(got.Stdout), encodingsSecret) {
				leaks++
				t.Errorf("%s in JSON: leaked\n in: %s\nout: %s", c.name, j, jout)
			}
		}
	}
	t.Logf("%d encodings × %d documents × raw and JSON, %d leaked", len(encodingCases), len(encodingDocs("")), leaks)
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	if *updateEncodings {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run with -update-encodings)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what the writer makes (run with -update-encodings)", name)
	}
}

// fakeBinary is an ELF-like file: a header, tables of small integers,
// strings, and random bytes (fixed seed).
func fakeBinary() []byte {
	b := []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x3e\x00\x01\x00\x00\x00")
	rng := rand.New(rand.NewPCG(7, 9))
	for i := 0; i < 96; i++ {
		b = append(b, byte(i%7), 0, 0, 0)
	}
	b = append(b, "\x00GLIBC_2.2.5\x00__libc_start_main\x00/lib64/ld-linux-x86-64.so.2\x00.shstrtab\x00.text\x00"...)
	for i := 0; i < 512; i++ {
		b = append(b, byte(rng.Uint32()))
	}
	return b
}

// benignEncodings are the everyday neighbours of the encodings above,
// which stay as they are: hexdumps of binaries, base32 seeds nobody
// uses here, UTF-16 text without a secret, byte arrays, spaced letters.
func benignEncodings() map[string]string {
	bin := fakeBinary()
	text := []byte("Hello, World. This is a README in plain text.\nSecond line; nothing secret.\n")
	rng := rand.New(rand.NewPCG(3, 4))
	seed := make([]byte, 20)
	for i := range seed {
		seed[i] = byte(rng.Uint32())
	}
	return map[string]string{
		"xxd of a binary":             xxdDump(bin, 2, 16, false),
		"xxd -g1 of text":             xxdDump(text, 1, 16, false),
		"hexdump -C of a binary":      hexdumpC(bin, false),
		"hexdump -C -v of text":       hexdumpC(text, true),
		"hexdump of a binary":         hexdumpWords(bin, false),
		"od of a binary":              odDump(bin, "o2", true),
		"od -c of text":               odDump(text, "c", true),
		"od -t d1 of a binary":        odDump(bin, "d1", true),
		"od -An -tx1 of text":         odDump(text, "x1", false),
		"TOTP seed, base32":           base32.StdEncoding.EncodeToString(seed),
		"TOTP seeds, a table":         "alice " + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(seed) + "\nbob   " + base32.StdEncoding.EncodeToString(seed[:10]) + "\n",
		"base32 of text":              base32Wrapped(text, false),
		"UTF-16 text":                 utf16Text("Hello, World. Plain text in UTF-16, nothing secret here.\r\n", "UTF-16"),
		"UTF-16BE text":               utf16Text("Name,Value\r\ncolor,blue\r\n", "UTF-16BE"),
		"MAC addresses":               "link/ether 52:54:00:12:34:56 brd ff:ff:ff:ff:ff:ff\n",
		"IPv6 and times":              "inet6 fe80::5054:ff:fe12:3456/64 at 12:34:56 on 2024-01-02\n",
		"byte array":                  "[137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82]\n",
		"spaced heading":              "S U M M A R Y\n=============\na b c d e f g h\n",
		"C array":                     "static const unsigned char png[] = {0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a};\n",
		"shellcode-like escapes":      `printf '\x1b[1;31mred\x1b[0m\n'` + "\n",
		"letters of a word, in JSON":  `["h","e","l","l","o"," ","w","o","r","l","d"]`,
		"dec table":                   "  1  2  3  4  5  6  7  8\n 10 20 30 40 50 60 70 80\n",
		"hex words in a stack trace":  "goroutine 1 [running]:\nmain.main()\n\t/app/main.go:12 +0x1d fp=0xc000 sp=0xc000 pc=0x4a2b3c\n",
		"git object ids, abbreviated": "9fceb02 d0ae598 e95dc97 0b74767 f193720 61af8aa\n",
	}
}

// TestEncodingsBenign: the neighbours stay unchanged, raw and in JSON.
func TestEncodingsBenign(t *testing.T) {
	s := newTestScrubber(t, map[string]string{"API_KEY": encodingsSecret})
	for name, in := range benignEncodings() {
		if out := s.Scrub(in); out != in {
			t.Errorf("%s changed:\n in: %q\nout: %q", name, in, out)
		}
		j, _ := json.Marshal(map[string]string{"stdout": strings.ToValidUTF8(in, "\uFFFD")})
		if out := s.Scrub(string(j)); out != string(j) {
			t.Errorf("%s in JSON changed:\n in: %s\nout: %s", name, j, out)
		}
	}
}
