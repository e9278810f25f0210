package scrub

import (
	"encoding/json"
	"strings"
	"testing"
)

// fuzzSecret reports whether a fuzzed value can be a known value the
// readers of the encodings corpus read back unambiguously: printing
// ASCII, no blank, no backslash (a value holding \n reads as a line
// break to the fold and JSON readers), 12 to 40 bytes (a shorter one makes a base64 run
// shorter than minEncodedRun).
func fuzzSecret(v string) bool {
	if len(v) < 12 || len(v) > 40 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] >= 0x7f || v[i] == '|' || v[i] == '\\' {
			return false
		}
	}
	return true
}

// FuzzDumps: the dump, base32 and UTF-16 readers never panic, redact
// within the text and keep scrubbing idempotent, whatever the text; and a
// known value written after any text in any of the corpus's encodings is
// never read back from the scrubbed output, raw or in a JSON string.
func FuzzDumps(f *testing.F) {
	for i, c := range encodingCases {
		f.Add(c.encode([]byte("x")), encodingsSecret, uint8(i))
	}
	f.Add("00000000: 5a6b 3370  Zk\n0000000", "Zk3p_Known", uint8(0))
	f.Add(`\u0000Z\u0000k\u00003\u0000`, "abcdefgh", uint8(23))
	f.Add("   a   b   c   d\n0000020  \\n  \\0 377", "abcd1234", uint8(12))
	f.Add("0x5a, 0x6b, 0x33, 0x70 [90,107,51,112] a:b:c:d:e:f", "Zk3p_Kn0", uint8(31))
	f.Fuzz(func(t *testing.T, text, secret string, form uint8) {
		if len(text) > 1<<12 {
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
		if !fuzzSecret(secret) || strings.ContainsAny(text, "\x00\\") {
			return
		}
		c := encodingCases[int(form)%len(encodingCases)]
		in := c.encode([]byte(strings.ToValidUTF8(text, "") + "\n" + secret + "\n"))
		if got := s.Scrub(in); strings.Contains(c.read(got), secret) {
			t.Fatalf("%s: %q left in\n%q", c.name, secret, got)
		}
		j, _ := json.Marshal(map[string]string{"stdout": strings.ToValidUTF8(in, "\uFFFD")})
		var back struct{ Stdout string }
		if err := json.Unmarshal([]byte(s.Scrub(string(j))), &back); err != nil {
			t.Fatalf("%s: scrubbed JSON invalid: %v", c.name, err)
		}
		if strings.Contains(c.read(back.Stdout), secret) {
			t.Fatalf("%s in JSON: %q left in\n%q", c.name, secret, back.Stdout)
		}
	})
}

// FuzzScrubAcross: for any two parts and any JSON document, ScrubAcross
// never panics, keeps a valid JSON part valid, and a known value cut in
// two across the parts is not left whole in either order.
func FuzzScrubAcross(f *testing.F) {
	f.Add("before ", " after", `{"a":["x","y\"z"],"b":"c\\"}`, encodingsSecret, 7)
	f.Add("", "", `"\u0000`, "abcdefgh", 1)
	f.Add("a\n", "\\n", `[1,"2",{"3":"4"}]`, "Zk3p_Known-Secret", 16)
	f.Fuzz(func(t *testing.T, a, b, doc, secret string, cut int) {
		if len(a)+len(b)+len(doc) > 1<<12 {
			return
		}
		s, err := New(map[string]string{"K": secret}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := s.ScrubAcross([]Part{{Text: s.Scrub(doc), JSON: true}, {Text: a}, {Text: b}})
		if json.Valid([]byte(s.Scrub(doc))) && !json.Valid([]byte(out[0])) {
			t.Fatalf("JSON part no longer valid: %q → %q", doc, out[0])
		}
		if !fuzzSecret(secret) || strings.ContainsAny(a+b, "\\\x00") {
			return
		}
		cut = 1 + (cut%(len(secret)-1)+len(secret)-1)%(len(secret)-1)
		parts := []Part{{Text: s.Scrub(a + secret[:cut])}, {Text: s.Scrub(secret[cut:] + b)}}
		got := s.ScrubAcross(parts)
		if strings.Contains(got[0]+got[1], secret) || strings.Contains(got[0]+"\n"+got[1], secret) {
			t.Fatalf("split value left whole: %q", got)
		}
	})
}
