package scrub

import "strings"

// Placeholders and documentation examples: values that stand where a
// secret would go, or that show its shape, rather than being one. Each
// test here is one a random value of a real key format fails with
// negligible probability, so that no real secret passes for an example.

// examplePlaceholder reports values that are obviously not a real
// secret: a bracketed or angled stand-in ([PASSWORD], <user:password>),
// masked or truncated text (***, ops_eyJ…..[Redacted], abc...), a run of
// one repeated character (xxxxxxxx), and the alphabet written out
// (sk_abcdefghijklmnopqrstuvwxyz123).
func examplePlaceholder(v string) bool {
	if v == "" {
		return true
	}
	switch {
	case v[0] == '[' || v[0] == '<' || v[len(v)-1] == '>':
		return true
	case strings.Contains(v, "..."), strings.Contains(v, "…"), strings.Contains(v, "**"):
		return true
	case strings.HasSuffix(v, ".."):
		return true
	case containsFold(v, "[redacted"), containsFold(v, "redacted]"), containsFold(v, "xxxxx"),
		strings.Contains(v, "example"), hasSuffixFold(v, "example"), strings.HasSuffix(v, "EXAMPLEKEY"): // AWS's documentation keys
		return true
	}
	return repeatedRun(v) >= len(v)/2+1 || alphabetRun(v) >= 8
}

// repeatedRun is the length of the longest run of one byte in v.
func repeatedRun(v string) int {
	best, run := 0, 0
	for i := 0; i < len(v); i++ {
		if i > 0 && v[i] == v[i-1] {
			run++
		} else {
			run = 1
		}
		best = max(best, run)
	}
	return best
}

// alphabetRun is the length of the longest run of letters of one case
// in alphabet order (abcdefgh, KLMNOP): how documentation spells a key's
// shape. A random base62 value holds a run of 8 with probability about
// n/62^7.
func alphabetRun(v string) int {
	best, run := 0, 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			run = 0
			continue
		}
		if run > 0 && c == v[i-1]+1 {
			run++
		} else {
			run = 1
		}
		best = max(best, run)
	}
	return best
}

func containsFold(s, lower string) bool { return indexFold(s, lower) >= 0 }

// namedPlaceholder reports a value that names the secret it stands for
// instead of holding it: ACCESS_TOKEN, YOUR_API_KEY, api-key,
// your_token_here. Letters and separators only, with a secret's word in
// them; a real key of letters only holds such a word by chance with
// negligible probability.
func namedPlaceholder(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c|0x20 && c|0x20 <= 'z' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	for _, w := range [...]string{"token", "key", "secret", "password", "passwd", "pass", "your", "here", "example",
		"placeholder", "changeme", "dummy", "sample", "fake", "test", "value", "cred", "auth", "bearer"} {
		if containsFold(v, w) {
			return true
		}
	}
	return false
}

// configWord reports the words a password-named key takes in
// configuration that are not passwords: nsswitch's "passwd: files",
// PAM's control flags, on/off switches.
func configWord(v string) bool {
	switch strings.ToLower(v) {
	case "files", "compat", "systemd", "nis", "nisplus", "sss", "ldap", "winbind", "db", "dns",
		"required", "requisite", "optional", "sufficient", "include", "substack",
		"true", "false", "yes", "no", "on", "off", "none", "null", "nil", "undefined", "empty", "unset",
		"required:", "prompt", "hidden", "masked", "redacted", "omitted", "removed", "stdin", "env", "file",
		"string", "str", "text", "bytes", "secret", "password", "passwd", "token", "optional[str]":
		return true
	}
	return false
}

func hasSuffixFold(s, suf string) bool {
	return len(s) >= len(suf) && strings.EqualFold(s[len(s)-len(suf):], suf)
}
