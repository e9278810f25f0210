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
	if v[0] == '[' || v[0] == '<' || v[len(v)-1] == '>' || strings.HasSuffix(v, "..") {
		return true
	}
	// One pass for the runs, then the substring tests only where a byte
	// they need is present: this runs on every candidate value.
	run, same, alpha, bestAlpha := 1, 1, 1, 1
	var runByte byte
	dots, stars, brackets, e, nonASCII := false, false, false, false, false
	// A stand-in is short; of a long value its start shows enough.
	n := min(len(v), 128)
	for i := 0; i < n; i++ {
		c := v[i]
		switch c {
		case '.':
			dots = true
		case '*':
			stars = true
		case '[', ']':
			brackets = true
		case 'e', 'E':
			e = true
		}
		if c >= 0x80 {
			nonASCII = true
		}
		if i == 0 {
			continue
		}
		if c == v[i-1] {
			if run++; run > same {
				same, runByte = run, c
			}
		} else {
			run = 1
		}
		if ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') && c == v[i-1]+1 {
			if alpha++; alpha > bestAlpha {
				bestAlpha = alpha
			}
		} else {
			alpha = 1
		}
	}
	switch {
	case same >= n/2+1, bestAlpha >= 8, same >= 5 && runByte|0x20 == 'x':
		return true
	}
	h := v[:n]
	switch {
	case dots && strings.Contains(h, "..."), stars && strings.Contains(h, "**"), nonASCII && strings.Contains(h, "…"):
		return true
	case brackets && (containsFold(h, "[redacted") || containsFold(h, "redacted]")):
		return true
	case e && (strings.Contains(h, "example") || hasSuffixFold(v, "example") || strings.HasSuffix(v, "EXAMPLEKEY")):
		return true // AWS's documentation keys
	}
	return false
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
