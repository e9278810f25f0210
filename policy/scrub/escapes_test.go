package scrub

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestUnescape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`a\u005fb`, "a_b"},
		{`a\u005Fb\/c`, "a_b/c"},
		{`x\"y\\z\n\t`, "x\"y\\z\n\t"},
		{`\ud83d\ude00!`, "\U0001F600!"},
		{`\ud83d!`, "\uFFFD!"},
		{`%5f%5F%41`, "__A"},
		{`%e2%82%ac`, "€"},
		{`&#95;&#x5f;&#X5F;&amp;&lt;&gt;&quot;&apos;`, `___&<>"'`},
		{`\u0025\u0035\u0066`, "_"}, // a JSON-escaped percent escape: two layers
		{`&amp;#95;`, "_"},
	} {
		u, ok := unescape(tc.in)
		if !ok || u.text != tc.want {
			t.Errorf("unescape(%q) = %q, %v; want %q", tc.in, u.text, ok, tc.want)
		}
	}
	for _, in := range []string{"", "plain", "100% sure", `\x41`, `%zz`, "&#;", "&#x;", "& amp;", `\u12`, "a&b"} {
		if u, ok := unescape(in); ok {
			t.Errorf("unescape(%q) = %q, want nothing decoded", in, u.text)
		}
	}
}

// escapeMixed escapes the bytes of v that mask selects, each in the form
// the mask's next bits pick: the spellings a client decodes.
func escapeMixed(v string, mask uint64) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if mask>>(i%64)&1 == 0 {
			b.WriteByte(c)
			continue
		}
		switch (mask >> ((i + 7) % 61)) & 7 {
		case 0:
			fmt.Fprintf(&b, `\u%04x`, c)
		case 1:
			fmt.Fprintf(&b, `\u%04X`, c)
		case 2:
			fmt.Fprintf(&b, "%%%02X", c)
		case 3:
			fmt.Fprintf(&b, "%%%02x", c)
		case 4:
			fmt.Fprintf(&b, "&#x%x;", c)
		case 5:
			fmt.Fprintf(&b, "&#%d;", c)
		case 6:
			fmt.Fprintf(&b, `\u0025%02X`, c) // percent escape, JSON-escaped
		default:
			if c == '/' {
				b.WriteString(`\/`)
			} else {
				fmt.Fprintf(&b, `\u%04x`, c)
			}
		}
	}
	return b.String()
}

// A known value is found with any of its bytes escaped, in any mix of
// the forms clients decode, inside JSON and plain text alike.
func TestScrubKnownEscapedForms(t *testing.T) {
	const v = "tc_Secret/Value-42.x"
	s := newTestScrubber(t, map[string]string{"API_KEY": v})
	for _, mask := range []uint64{1, 1 << 2, 0xff, 0xffffffff, 0x5555555555, 0xaaaaaaaa, 0x123456789, 0xfedcba987654321, 1 << 19} {
		form := escapeMixed(v, mask)
		for _, text := range []string{
			`{"result":"` + form + `"}`,
			"token " + form + " end",
			"https://h/cb?k=" + form + "&x=1",
		} {
			out := s.Scrub(text)
			if !strings.Contains(out, "[REDACTED:secret:API_KEY]") || strings.Contains(out, form) {
				t.Errorf("mask %#x: Scrub(%q) = %q", mask, text, out)
			}
			if u, ok := unescape(out); ok && strings.Contains(u.text, v) {
				t.Errorf("mask %#x: decoded output still holds the value: %q", mask, u.text)
			}
		}
	}
	// What surrounds the value keeps its escapes.
	in := `{"a":"\u00e9t\u00e9","k":"` + escapeMixed(v, 0xf0f0f) + `"}`
	if out := s.Scrub(in); out != `{"a":"\u00e9t\u00e9","k":"[REDACTED:secret:API_KEY]"}` {
		t.Errorf("got %s", out)
	}
}

// Rules see decoded text too: a provider token with escaped bytes.
func TestScrubRulesOnEscapedText(t *testing.T) {
	s := newTestScrubber(t, nil)
	for _, tc := range []struct{ in, want string }{
		{`{"t":"ghp\u005fa1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"}`, `{"t":"[REDACTED:github-pat]"}`},
		{`{"t":"ghp&#95;a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"}`, `{"t":"[REDACTED:github-pat]"}`},
		{"GET /x?k=sk%5Flive%5F51HxYzAbCdEfGhIjKlMnOpQrStUv HTTP/1.1", "GET /x?k=[REDACTED:stripe-key] HTTP/1.1"},
		{`{"msg":"DB_PASSWORD\u003dXq7zP2mL9vK4"}`, `{"msg":"DB_PASSWORD\u003d[REDACTED:password]"}`},
	} {
		if got := s.Scrub(tc.in); got != tc.want {
			t.Errorf("Scrub(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// FuzzUnescape checks the decoder against encoding/json on JSON string
// bodies and the offset map on all input.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{`a\u005fb`, `\ud83d\ude00`, `%41&#66;&#x43;`, `\\u0041`, `&amp;amp;`, `\u0025\u0034\u0031`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, src, ok := unescapeOnce(in)
		if ok {
			if len(src) != len(out)+1 || src[len(out)] != int32(len(in)) {
				t.Fatalf("src has %d entries for %d bytes", len(src), len(out))
			}
			for i := 1; i < len(src); i++ {
				if src[i] < src[i-1] {
					t.Fatalf("src not monotone at %d: %v", i, src)
				}
			}
		}
		if strings.ContainsAny(in, "%&") || !utf8.ValidString(in) {
			return
		}
		var want string
		if json.Unmarshal([]byte(`"`+in+`"`), &want) != nil {
			return
		}
		if !ok {
			out = in
		}
		if out != want {
			t.Fatalf("unescape(%q) = %q, json says %q", in, out, want)
		}
		u, ok := unescape(in)
		if !ok {
			return
		}
		for a := 0; a < len(u.text); a++ {
			x, y := u.span(a, a+1)
			if x < 0 || y > len(in) || x >= y {
				t.Fatalf("span(%d) = [%d,%d) in %q", a, x, y, in)
			}
		}
	})
}

// FuzzScrubEscapedKnown: however a known value's bytes are escaped, no
// decoding of the output shows it.
func FuzzScrubEscapedKnown(f *testing.F) {
	f.Add("tc-known-secret-1", uint64(0x5a5a), "pre ", " post")
	f.Add("p@ss/w0rd&x=1", uint64(0xffff), `{"v":"`, `"}`)
	f.Fuzz(func(t *testing.T, secret string, mask uint64, pre, post string) {
		if len(secret) < minKnownLen || len(secret) > 64 {
			return
		}
		s, err := New(map[string]string{"K": secret}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := s.Scrub(pre + escapeMixed(secret, mask) + post)
		rest := reMarker.ReplaceAllString(out, "\x00")
		if u, ok := unescape(rest); ok {
			rest = u.text
		}
		// Text around the value may finish an escape the value began
		// (a trailing '%' before "41"), so only the value itself counts.
		if strings.Contains(asciiLower(rest), asciiLower(secret)) && !strings.Contains(asciiLower(pre+post), asciiLower(secret)) {
			if u, ok := unescape(pre + post); !ok || !strings.Contains(asciiLower(u.text), asciiLower(secret)) {
				t.Fatalf("secret %q survives: in %q out %q", secret, pre+escapeMixed(secret, mask)+post, out)
			}
		}
	})
}

// A long known value (a service account's JSON) with one escaped byte in
// its middle is found: the decoded window is at least as long as it.
func TestScrubLongKnownValueEscaped(t *testing.T) {
	v := strings.Repeat("tc-long-known-value/", 200) // 4,000 bytes
	s := newTestScrubber(t, map[string]string{"SA": v})
	mid := len(v) / 2
	in := "head " + v[:mid] + `\u00` + fmt.Sprintf("%02x", v[mid]) + v[mid+1:] + " tail"
	if out := s.Scrub(in); out != "head [REDACTED:secret:SA] tail" {
		t.Errorf("got %.80q…", out)
	}
}
