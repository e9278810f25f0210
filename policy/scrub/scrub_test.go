package scrub

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newTestScrubber(t testing.TB, known map[string]string) *Scrubber {
	t.Helper()
	s, err := New(known, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestScrubRules(t *testing.T) {
	s := newTestScrubber(t, nil)
	tests := []struct {
		kind, in, want string
	}{
		{"aws-access-key-id", "key AKIAQ3EGRTVXZ7KLMN2P ok", "key [REDACTED:aws-access-key-id] ok"},
		{"aws-secret-access-key", `aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKQ"`, `aws_secret_access_key = "[REDACTED:aws-secret-access-key]"`},
		{"google-api-key", "key=AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe&x", "key=[REDACTED:google-api-key]&x"},
		{"google-oauth-secret", "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 ", "[REDACTED:google-oauth-secret] "},
		{"google-oauth-token", "ya29.a0AfH6SMBx3kq9Zr7Tq1VvW2 done", "[REDACTED:google-oauth-token] done"},
		{"azure-storage-key", "AccountKey=" + "Zq4Xv8Lk2Pw9Rt5Ym1Nb7Hc3Jd6Fg0Sa+Ue/Wi4Oo8Ky2Tr5Ee1Qa9Ll3Mm7Nn0Bb6Vv2Cc8Xx4Zz1Gg5Hh9Jj==;", "AccountKey=[REDACTED:azure-storage-key];"},
		{"azure-sas-signature", "https://a.blob.core.windows.net/c?sv=2022&sig=q9Xk2%2BvLm7Tz0pRw3sNd8fGh1jKb4YcE", "https://a.blob.core.windows.net/c?sv=2022&sig=[REDACTED:azure-sas-signature]"},
		{"digitalocean-token", "dop_v1_" + strings.Repeat("0a1b2c3d4e5f6789", 4), "[REDACTED:digitalocean-token]"},
		{"heroku-api-key", "HEROKU_API_KEY: 3f9c2a1e-7b4d-4e8a-9c6f-1d2e3f4a5b6c", "HEROKU_API_KEY: [REDACTED:heroku-api-key]"},
		{"github-pat", "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "[REDACTED:github-pat]"},
		{"github-oauth-token", "gho_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "[REDACTED:github-oauth-token]"},
		{"github-app-token", "ghs_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "[REDACTED:github-app-token]"},
		{"github-refresh-token", "ghr_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "[REDACTED:github-refresh-token]"},
		{"github-fine-grained-pat", "github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234", "[REDACTED:github-fine-grained-pat]"},
		{"gitlab-token", "glpat-xY9_kL2mN4pQ7rS1tV3w", "[REDACTED:gitlab-token]"},
		{"npm-token", "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "[REDACTED:npm-token]"},
		{"pypi-token", "pypi-AgEIcHlwaS5vcmcCJGE0ZjY3YjI1LTk2NWEtNDM3Mi1hMzNhLWUxMmQ2ZjI5", "[REDACTED:pypi-token]"},
		{"docker-pat", "dckr_pat_a1B2c3D4e5F6g7H8i9J0k1L2m3N", "[REDACTED:docker-pat]"},
		{"docker-config-auth", `"auth": "Y2ktYm90OnM0ZmVQYXNzd29yZDk="`, `"auth": "[REDACTED:docker-config-auth]"`},
		{"huggingface-token", "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH", "[REDACTED:huggingface-token]"},
		{"databricks-token", "dapi0123456789abcdef0123456789abcdef", "[REDACTED:databricks-token]"},
		{"vault-token", "hvs.CAESIJ9k2Lm3Nq4Rs5Tu6Vw7Xy8Za1Bc2De3Fg4Hi5Jk6Lm", "[REDACTED:vault-token]"},
		{"vault-token", "vault login s.a1B2c3D4e5F6g7H8i9J0k1L2", "vault login [REDACTED:vault-token]"},
		{"anthropic-api-key", "sk-ant-api03-aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7-AA", "[REDACTED:anthropic-api-key]"},
		{"openai-api-key", "sk-proj-aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7", "[REDACTED:openai-api-key]"},
		{"slack-token", "xoxb-123456789012-1234567890123-aBcDeFgHiJkLmNoPqRsTuVwX", "[REDACTED:slack-token]"},
		{"slack-webhook", "https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/aBcDeFgHiJkLmNoPqRsTuVwX", "https://hooks.slack.com/services/[REDACTED:slack-webhook]"},
		{"telegram-bot-token", "bot 1234567890:AAaBcDeFgHiJkLmNoPqRsTuVwXyZ0123456 ok", "bot [REDACTED:telegram-bot-token] ok"},
		{"stripe-key", "sk_live_51HxYzAbCdEfGhIjKlMnOpQrStUv", "[REDACTED:stripe-key]"},
		{"shopify-token", "shpat_0123456789abcdef0123456789abcdef", "[REDACTED:shopify-token]"},
		{"twilio-key", "TWILIO_AUTH_TOKEN=0123456789abcdef0123456789abcdef", "TWILIO_AUTH_TOKEN=[REDACTED:twilio-key]"},
		{"sendgrid-api-key", "SG.aBcDeFgHiJkLmNoPqRsTuV.aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789aBcDeFg", "[REDACTED:sendgrid-api-key]"},
		{"mailgun-api-key", "key-0123456789abcdef0123456789abcdef", "[REDACTED:mailgun-api-key]"},
		{"postman-api-key", "PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01", "[REDACTED:postman-api-key]"},
		{"newrelic-api-key", "NRAK-A1B2C3D4E5F6G7H8I9J0K1L2M3N", "[REDACTED:newrelic-api-key]"},
		{"linear-api-key", "lin_api_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0", "[REDACTED:linear-api-key]"},
		{"jwt", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk", "token [REDACTED:jwt]"},
		{"private-key", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oA3aG3o1ABCDoAoGCCqGSM49\n-----END EC PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----[REDACTED:private-key]-----END EC PRIVATE KEY-----"},
		{"private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n(truncated)", "-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED:private-key](truncated)"},
		{"url-password", "mongodb+srv://app:Pa55w0rd-x91@cluster0.example.net/db", "mongodb+srv://app:[REDACTED:url-password]@cluster0.example.net/db"},
		{"authorization", "Authorization: token 0123456789abcdef0123456789abcdef01234567", "Authorization: token [REDACTED:authorization]"},
		{"bearer-token", "-H 'X-Auth: Bearer aB3dE5gH7jK9mN1p'", "-H 'X-Auth: Bearer [REDACTED:bearer-token]'"},
		{"basic-auth", "Authorization: Basic ZGVwbG95OnMzY3IzdA==", "Authorization: Basic [REDACTED:authorization]"},
		{"cli-password", "curl -u deploy:s3cr3t-Pass https://x", "curl -u deploy:[REDACTED:cli-password] https://x"},
		{"cli-password", "mysql -uroot -pHunt3r22 db", "mysql -uroot -p[REDACTED:cli-password] db"},
		{"cli-password", "sshpass -p 'Tr1cky!pw' ssh host", "sshpass -p '[REDACTED:cli-password]' ssh host"},
		{"password", "DB_PASSWORD=Xq7zP2mL9vK4", "DB_PASSWORD=[REDACTED:password]"},
		{"password", `{"client_secret": "9f8e7d6c5b4a3f2e1d0c"}`, `{"client_secret": "[REDACTED:password]"}`},
		{"password", "X-Api-Key: 7Hs9Kq2LmZ4xWv1B", "X-Api-Key: [REDACTED:password]"},
		{"password", "apiKey: 'a8F3kQ9zL2mX'", "apiKey: '[REDACTED:password]'"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			if got := s.Scrub(tt.in); got != tt.want {
				t.Errorf("Scrub(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestScrubLookAlikes(t *testing.T) {
	s := newTestScrubber(t, nil)
	for _, in := range []string{
		"commit 9f2c1e07a4b3d8e6f1a0c2b5d7e9f8a6b4c3d2e1",
		"uid: 5f0c2a9e-8c1b-4e7d-9a36-2b6f1d0e4c73",
		`"integrity": "sha512-RJlIHRueQgwWitWgF8OdFYGZX328Ax5BCemNGlqHfplnRT9ESi8JkFlvaVYbS+UubVY6dpv87Fs2u5M29iNFVQ=="`,
		"token_type: bearer",
		`"max_tokens": 4096`,
		"password: ********",
		"token: ${{ secrets.GITHUB_TOKEN }}",
		"PWD=/srv/app",
		"secretName: payments-tls",
		"Use Bearer authentication.",
		"AKIAIOSFODNN7EXAMPLE is the documented example id",
		"https://user@example.com/path",
		"the task-runner-configuration-file",
		"[REDACTED:github-pat] and [REDACTED:secret:API_KEY]",
	} {
		if got := s.Scrub(in); got != in {
			t.Errorf("Scrub(%q) = %q, want unchanged", in, got)
		}
	}
}

func TestScrubKnownForms(t *testing.T) {
	const v = "tc-Secret/Value+42?&x"
	s := newTestScrubber(t, map[string]string{"API_KEY": v, "SHORT": "abc"})
	b := []byte(v)
	for _, form := range []string{
		v,
		base64.StdEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
		url.QueryEscape(v),
		url.PathEscape(v),
		hex.EncodeToString(b),
		strings.ToUpper(hex.EncodeToString(b)),
	} {
		in := "out: <" + form + "> end"
		want := "out: <[REDACTED:secret:API_KEY]> end"
		if got := s.Scrub(in); got != want {
			t.Errorf("form %q: got %q", form, got)
		}
	}
	if got := s.Scrub("abc abc"); got != "abc abc" {
		t.Errorf("short known value redacted: %q", got)
	}
	// WithKnown swaps the values and keeps the rules.
	w := s.WithKnown(map[string]string{"OTHER": "zzz-other-value"})
	if got := w.Scrub(v + " zzz-other-value ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"); got != v+" [REDACTED:secret:OTHER] [REDACTED:github-pat]" {
		t.Errorf("WithKnown: %q", got)
	}
	if got := string(s.ScrubBytes([]byte("x" + v))); got != "x[REDACTED:secret:API_KEY]" {
		t.Errorf("ScrubBytes: %q", got)
	}
}

func TestScrubExtraRules(t *testing.T) {
	s, err := New(nil, []Rule{{Kind: "acme", Pattern: `acme_([0-9a-z]{12})`, SecretGroup: 1, Keywords: []string{"acme_"}, MinEntropy: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Scrub("k=ACME_x acme_a1b2c3d4e5f6"); got != "k=ACME_x acme_[REDACTED:acme]" {
		t.Errorf("got %q", got)
	}
	// Where a built-in context rule finds the same value ("key" before
	// it), the person's rule names the kind.
	s, err = New(nil, []Rule{{Kind: "acme-token", Pattern: `\b(acme_[A-Za-z0-9]{32})\b`, SecretGroup: 1, Keywords: []string{"acme_"}, MinEntropy: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Scrub("key acme_Zq8vK2mXw9rTj4LpZq8vK2mXw9rTj4Lp"); got != "key [REDACTED:acme-token]" {
		t.Errorf("got %q", got)
	}
	for _, bad := range []Rule{
		{Kind: "x", Pattern: `(`},
		{Kind: "x", Pattern: `a`, SecretGroup: 1},
		{Pattern: `a`},
		{Kind: "x", Pattern: `a`, Keywords: []string{""}},
	} {
		if _, err := New(nil, []Rule{bad}); err == nil {
			t.Errorf("New(%+v): want error", bad)
		}
	}
}

func TestScrubIdempotent(t *testing.T) {
	s := newTestScrubber(t, map[string]string{"K": "REDACTED-ish"})
	for _, in := range []string{
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6\n-----END RSA PRIVATE KEY-----",
		"password=Xq7zP2mL9vK4 token: aB3dE5gH7jK9mN1p REDACTED-ish",
	} {
		once := s.Scrub(in)
		if twice := s.Scrub(once); twice != once {
			t.Errorf("not idempotent:\n once %q\ntwice %q", once, twice)
		}
	}
}

// A known value is found where JSON output escaped it, as Go's encoder
// (\u0026 for &) and as other encoders (only \" and \\) write it.
func TestScrubKnownJSONForms(t *testing.T) {
	const v = `s3c+r/e=t&Zq8<vK2>"x\y`
	s := newTestScrubber(t, map[string]string{"k": v})
	for _, text := range []string{
		`{"echo":"s3c+r/e=t\u0026Zq8\u003cvK2\u003e\"x\\y"}`,
		`{"echo":"s3c+r/e=t&Zq8<vK2>\"x\\y"}`,
	} {
		if out := s.Scrub(text); out != `{"echo":"[REDACTED:secret:k]"}` {
			t.Errorf("Scrub(%s) = %s", text, out)
		}
	}
}

// Built-in rules tried once per keyword (anchored) redact exactly what a
// search of their whole windows does.
func TestScrubAnchoredSameAsWindowed(t *testing.T) {
	anch := newTestScrubber(t, nil)
	win := newTestScrubber(t, nil)
	win.unanchored = true
	files, _ := filepath.Glob("testdata/*/*.txt")
	if len(files) < 10 {
		t.Fatalf("corpus: %d files", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		// Also with every line twice on one line, so keywords repeat
		// within a window.
		var doubled strings.Builder
		for l := range strings.Lines(text) {
			l = strings.TrimSuffix(l, "\n")
			doubled.WriteString(l + " " + l + "\n")
		}
		for _, in := range []string{text, doubled.String()} {
			if a, w := anch.Scrub(in), win.Scrub(in); a != w {
				t.Errorf("%s: anchored and windowed differ:\n%s\n----\n%s", f, a, w)
			}
		}
	}
}

// FuzzScrubAnchored checks that anchoring loses nothing: what anchored
// rules leave, a search of whole windows finds nothing in. (Anchored may
// find more: a window search resumes after each match, so it misses a
// candidate that starts inside a rejected one.)
func FuzzScrubAnchored(f *testing.F) {
	f.Add("Authorization: Bearer aB3dE5gH7jK9mN1pQ2 bearer x bearer Zz9Yy8Xx7Ww6Vv5U")
	f.Add("mysql -u root -pS3cr3tPass mysql -pX; sshpass -p hunter22 ssh h")
	f.Add("sk-proj-a1B2c3D4e5F6g7H8i9J0k1L2m3N4 sk-sk-a1B2c3D4e5F6g7H8i9J0k1L2")
	anch, err := New(nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	win, _ := New(nil, nil)
	win.unanchored = true
	f.Fuzz(func(t *testing.T, text string) {
		a := anch.Scrub(text)
		if w := win.Scrub(a); w != a {
			t.Fatalf("a window search finds more in what anchored rules left of %q:\n%q\n%q", text, a, w)
		}
	})
}

func TestCheckRule(t *testing.T) {
	for _, tc := range []struct {
		r  Rule
		ok bool
	}{
		{Rule{Kind: "acme-token", Pattern: `acme_[a-z]{8}`, Keywords: []string{"acme_"}}, true},
		{Rule{Kind: "", Pattern: `x`}, false},
		{Rule{Kind: "a b", Pattern: `x`}, false},
		{Rule{Kind: "a]b", Pattern: `x`}, false},
		{Rule{Kind: "gitleaks:x", Pattern: `x`}, false},
		{Rule{Kind: "k", Pattern: `(`}, false},
		{Rule{Kind: "k", Pattern: `(x)`, SecretGroup: 2}, false},
		{Rule{Kind: "k", Pattern: `x`, Keywords: []string{""}}, false},
	} {
		if err := CheckRule(tc.r); (err == nil) != tc.ok {
			t.Errorf("CheckRule(%+v) = %v, want ok=%v", tc.r, err, tc.ok)
		}
	}
}

// lastKeywordEnd agrees with the plain definition: the largest end of a
// last occurrence of any generic keyword.
func FuzzLastKeywordEnd(f *testing.F) {
	for _, s := range []string{"dbpassword", "maxtokens", "secrettokenkey", "apikeyvalue", "credentialsfile", "pwdx", "", "tokentoken"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, k string) {
		want := -1
		for _, kw := range genericKeywords {
			if i := strings.LastIndex(k, kw); i >= 0 && i+len(kw) > want {
				want = i + len(kw)
			}
		}
		if got := lastKeywordEnd([]byte(k)); got != want {
			t.Fatalf("lastKeywordEnd(%q) = %d, want %d", k, got, want)
		}
	})
}
