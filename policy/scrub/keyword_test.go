package scrub

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// corpusRow is one row of testdata/keyword: an input, and for a
// positive the secrets in it.
type corpusRow struct {
	file    string
	line    int
	in      string
	secrets []string
	parts   []string // in, cut at the secrets
}

const openMark, closeMark = "⟦", "⟧"

// readCorpusRows parses testdata/keyword/*.txt: "+ TEXT" rows with
// secrets between ⟦ and ⟧, "- TEXT" rows that must pass unchanged, a
// TEXT that is a whole Go string literal being read as one.
func readCorpusRows(t *testing.T) []corpusRow {
	t.Helper()
	files, err := filepath.Glob("testdata/keyword/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no keyword corpus: %v", err)
	}
	var rows []corpusRow
	for _, f := range files {
		for n, l := range strings.Split(readFile(t, f), "\n") {
			if l == "" || l[0] == '#' {
				continue
			}
			if len(l) < 3 || l[0] != '+' && l[0] != '-' || l[1] != ' ' {
				t.Fatalf("%s:%d: want '+ TEXT' or '- TEXT'", f, n+1)
			}
			text := l[2:]
			if u, err := strconv.Unquote(text); err == nil && text[0] == '"' {
				text = u
			}
			r := corpusRow{file: filepath.Base(f), line: n + 1}
			rest := text
			for {
				i := strings.Index(rest, openMark)
				if i < 0 {
					break
				}
				j := strings.Index(rest[i:], closeMark)
				if j < 0 {
					t.Fatalf("%s:%d: unclosed %s", f, n+1, openMark)
				}
				r.parts = append(r.parts, rest[:i])
				r.secrets = append(r.secrets, rest[i+len(openMark):i+j])
				rest = rest[i+j+len(closeMark):]
			}
			r.parts = append(r.parts, rest)
			r.in = strings.Join(r.parts[:1], "")
			for k, s := range r.secrets {
				r.in += s + r.parts[k+1]
			}
			if (l[0] == '+') != (len(r.secrets) > 0) {
				t.Fatalf("%s:%d: a '+' row marks its secrets, a '-' row none", f, n+1)
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// TestKeywordCorpus: every marked secret is redacted with nothing else
// changed, and every neighbour passes as it is.
func TestKeywordCorpus(t *testing.T) {
	s := newTestScrubber(t, nil)
	pos, neg := 0, 0
	for _, r := range readCorpusRows(t) {
		out := s.Scrub(r.in)
		if len(r.secrets) == 0 {
			neg++
			if out != r.in {
				t.Errorf("%s:%d: false redaction:\n  in  %q\n  out %q", r.file, r.line, r.in, out)
			}
			continue
		}
		pos++
		var pat strings.Builder
		pat.WriteString("^")
		for k, p := range r.parts {
			if k > 0 {
				pat.WriteString(`\[REDACTED:[a-z0-9:._-]+\]`)
			}
			pat.WriteString(regexp.QuoteMeta(p))
		}
		pat.WriteString("$")
		if !regexp.MustCompile(pat.String()).MatchString(out) {
			t.Errorf("%s:%d: want %q redacted:\n  in  %q\n  out %q", r.file, r.line, r.secrets, r.in, out)
		}
		if again := s.Scrub(out); again != out {
			t.Errorf("%s:%d: not idempotent: %q -> %q", r.file, r.line, out, again)
		}
	}
	t.Logf("%d positives, %d neighbours", pos, neg)
}

func TestNameTier(t *testing.T) {
	for _, tc := range []struct {
		name string
		want nameTier
	}{
		{"password", tierPass}, {"DB_PASSWORD", tierPass}, {"PGPASSWORD", tierPass}, {"pwd", tierPass}, {"bearer", tierPass},
		{"bypass", tierNone}, {"compass", tierNone}, {"password_min_length", tierNone}, {"passwordFile", tierNone},
		{"client_secret", tierSecret}, {"authToken", tierSecret}, {"creds", tierSecret}, {"user_auth", tierSecret},
		{"some_api_token_123", tierSecret}, {"mySecretString", tierSecret}, {"oauth", tierNone},
		{"AccountKey", tierKey}, {"cashboard_key", tierKey}, {"KEY", tierKey},
		{"access_key_id", tierID}, {"SecretId", tierID}, {"client_id", tierID},
		{"public_key", tierNone}, {"csrf_token", tierNone}, {"csrfmiddlewaretoken", tierNone}, {"authenticity_token", tierNone},
		{"next_page_token", tierNone}, {"primaryKey", tierNone}, {"monkey", tierNone}, {"token_type", tierNone},
		{"key_name", tierNone}, {"tokenizer", tierNone}, {"max_tokens", tierNone}, {"secretName", tierNone},
		{"mailgun", tierProvider}, {"stripe", tierProvider},
	} {
		if got := nameTierOf(tc.name, true); got != tc.want {
			t.Errorf("nameTierOf(%q) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestExamplePlaceholder(t *testing.T) {
	for _, v := range []string{"[PASSWORD]", "<user:password>", "password>", "***", "ops_eyJzaWduSW5B..", "abc...",
		"ops_eyJzaWduSW5B..[Redacted]", "xxxxxxxxxxxx", "sk_abcdefghijklmnopqrstuvwxyz123", "AKIAIOSFODNN7EXAMPLE", "aaaaaaaaaaaaaaaa"} {
		if !examplePlaceholder(v) {
			t.Errorf("examplePlaceholder(%q) = false", v)
		}
	}
	for _, v := range []string{rnd, "Xq7zP2mL9vK4Wn8Rt5Yb", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "hunter22", "d41d8cd98f00b204e9800998ecf8427e"} {
		if examplePlaceholder(v) {
			t.Errorf("examplePlaceholder(%q) = true", v)
		}
	}
	for _, v := range []string{"ACCESS_TOKEN", "YOUR_API_KEY", "api-key", "your_token_here"} {
		if !namedPlaceholder(v) {
			t.Errorf("namedPlaceholder(%q) = false", v)
		}
	}
	for _, v := range []string{rnd, "letmein", "Zx8Kq2Lm4NvB7abc"} {
		if namedPlaceholder(v) {
			t.Errorf("namedPlaceholder(%q) = true", v)
		}
	}
}

// TestRepeatedValue: a value found once is redacted where it is printed
// again nearby, without the context that showed it.
func TestRepeatedValue(t *testing.T) {
	runClass(t, []classCase{
		{"acme token = 'Zx8Kq2Lm4NvB7Qw9Rt5Yb1Hc' | 'Zx8Kq2Lm4NvB7Qw9Rt5Yb1Hc'", "acme token = '[REDACTED:password]' | '[REDACTED:password]'"},
		{"API_KEY=Zx8Kq2Lm4NvB7Qw9Rt5Yb1Hc\ncurl -H 'X-Key: Zx8Kq2Lm4NvB7Qw9Rt5Yb1Hc' https://api.example.com",
			"API_KEY=[REDACTED:password]\ncurl -H 'X-Key: [REDACTED:password]' https://api.example.com"},
		// Part of a longer token is not the value.
		{"API_KEY=Zx8Kq2Lm4NvB7Qw9Rt5Yb1Hc id=aaZx8Kq2Lm4NvB7Qw9Rt5Yb1Hcbb", "API_KEY=[REDACTED:password] id=aaZx8Kq2Lm4NvB7Qw9Rt5Yb1Hcbb"},
	})
}

// FuzzKeywordAll: at every keyword the parser neither panics nor returns
// a value outside the text, and the values it returns hold no blank.
func FuzzKeywordAll(f *testing.F) {
	for _, s := range []string{"api key 3f9aZq7LmP2xWv8NcR4t", "KEY=\n", "password: \"", `"token":"\"`, "key{\n  \"",
		"mailgun '", "token - 'Zx8Kq2Lm4NvB7Qw9Rt5Yb1Hc' | 'x'", "[REDACTED:password] id=aaZx8Kq2Lm4NvB7Qw9Rt5Yb1Hcbb",
		`<add key="StorageAccountKey" value="`, "<key>API_KEY</key>\n<string>", "val api_TOKEN: String = \"x",
		"-storagekey ", "bearer:", "is", "key is", "\"key\": \"value\": "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		keywordHits(text, keywordLits, func(ks, ke int) {
			fs := keywordAll(text, ks, ke)
			checkFound(t, text, fs)
			for _, x := range fs {
				if strings.ContainsAny(text[x.a:x.b], " \t\n") && !(x.a >= len("<string>") && strings.HasPrefix(text[x.a-len("<string>"):], "<string>")) {
					t.Fatalf("value %q holds a blank in %q", text[x.a:x.b], text)
				}
			}
		})
	})
}
