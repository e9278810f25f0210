package scrub

import (
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
)

var reMarker = regexp.MustCompile(`\[REDACTED:[A-Za-z0-9_.:\-]*\]`)

// FuzzScrub checks that Scrub never panics, is idempotent, and leaves no
// raw, base64 or hex form of a known secret outside its markers.
func FuzzScrub(f *testing.F) {
	f.Add("password=Xq7zP2mL9vK4 and tc-known-secret-1", "tc-known-secret-1")
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1L\n", "MIIEpAIBAAK")
	f.Add("curl -u a:b https://u:p@h/ Authorization: Bearer aB3dE5gH7jK9mN1p", "REDACTED")
	f.Add("dGMta25vd24tc2VjcmV0LTE= 74632d6b6e6f776e2d7365637265742d31", "tc-known-secret-1")
	f.Add("ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8ghp_a1B2", "ghp_a1B2c3")
	f.Add("Cookie: sid=Zx9Kq2Lm4Np6Rs0T; docker login -p Dk9mX2qL7vR4 password=&user=bob", "Dk9mX2qL7vR4")
	f.Add(`{"v":"tc\u002dknown%2Dsecret&#45;1"} <password>Xq7zP2mL9vK4</password>`, "tc-known-secret-1")
	f.Add("root:$6$Ab12Cd34$Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8:19000 u:p@tcp(h)/d", "Xq7zP2mL9vK4")
	f.Fuzz(func(t *testing.T, text, secret string) {
		s, err := New(map[string]string{"K": secret}, nil)
		if err != nil {
			t.Fatal(err)
		}
		once := s.Scrub(text)
		if twice := s.Scrub(once); twice != once {
			t.Fatalf("not idempotent:\n in    %q\n once  %q\n twice %q", text, once, twice)
		}
		if len(secret) < minKnownLen || strings.ContainsAny(secret, "\x00") {
			return
		}
		rest := asciiLower(reMarker.ReplaceAllString(once, "\x00"))
		b := []byte(secret)
		for _, form := range []string{
			secret,
			base64.StdEncoding.EncodeToString(b),
			base64.RawURLEncoding.EncodeToString(b),
			hex.EncodeToString(b),
		} {
			if strings.Contains(rest, asciiLower(form)) {
				t.Fatalf("secret form %q survives in %q (input %q)", form, once, text)
			}
		}
	})
}

// asciiLower folds ASCII letters only, as the scrubber's matcher does.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = foldByte(c)
	}
	return string(b)
}
