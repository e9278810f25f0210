package scrub

import (
	"regexp"
	"strings"
	"testing"
)

// Fuzz targets for the format parsers: at every keyword of the input the
// parser must not panic, and what it returns must lie inside the text,
// with the secret inside the match.

// keywordHits calls fn at every case-insensitive occurrence of a keyword.
func keywordHits(text string, keywords []string, fn func(ks, ke int)) {
	lower := asciiLower(text)
	for _, k := range keywords {
		for off := 0; ; {
			i := strings.Index(lower[off:], k)
			if i < 0 {
				break
			}
			fn(off+i, off+i+len(k))
			off += i + 1
		}
	}
}

func checkLoc(t *testing.T, text string, loc []int) {
	t.Helper()
	if loc == nil {
		return
	}
	if len(loc) < 4 || len(loc)%2 != 0 {
		t.Fatalf("loc %v: odd length", loc)
	}
	a, b := loc[0], loc[1]
	if a < 0 || a > b || b > len(text) {
		t.Fatalf("match [%d,%d) outside text of %d bytes", a, b, len(text))
	}
	for i := 2; i+1 < len(loc); i += 2 {
		if loc[i] < 0 {
			continue
		}
		if loc[i] < a || loc[i] > loc[i+1] || loc[i+1] > b {
			t.Fatalf("group [%d,%d) outside match [%d,%d) in %q", loc[i], loc[i+1], a, b, text)
		}
	}
}

func checkFound(t *testing.T, text string, fs []found) {
	t.Helper()
	for _, f := range fs {
		if f.a < 0 || f.a > f.b || f.b > len(text) {
			t.Fatalf("found [%d,%d) outside text of %d bytes: %q", f.a, f.b, len(text), text)
		}
	}
}

func fuzzAt(f *testing.F, keywords []string, at func(text string, ks, ke int) []int, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		keywordHits(text, keywords, func(ks, ke int) { checkLoc(t, text, at(text, ks, ke)) })
	})
}

func fuzzAll(f *testing.F, keywords []string, all func(text string, ks, ke int) []found, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		keywordHits(text, keywords, func(ks, ke int) { checkFound(t, text, all(text, ks, ke)) })
	})
}

func FuzzGenericAt(f *testing.F) {
	fuzzAt(f, []string{"pass", "pwd", "secret", "token", "session", "api_key"}, genericAt,
		"password=&user=bob", "<db:password attr='x'>Xq7zP2mL9vK4</db:password>", "<secret><![CDATA[abc&def]]></secret>",
		"machine h login u password \"a b c d e f\"", "--token 'Kb8sT0k3nQ9xZ2'", "- name: DB_PASSWORD\n  value: Xq7zP2mL9vK4",
		`<add key="Password" value="Sm7pQw2Er9Ty4U"/>`, "InvalidToken: tok_12")
}

func FuzzCookieAll(f *testing.F) {
	fuzzAll(f, []string{"cookie"}, cookieAll,
		"Set-Cookie: sessionid=9f8e7d6c5b4a3f2e1d0c; Path=/", `document.cookie = "auth_token=Zx9Kq2Lm4Np6Rs0T`, "cookies=;;=;sid=")
}

func FuzzCookieJarAll(f *testing.F) {
	fuzzAll(f, []string{"\ttrue\t", "\tfalse\t"}, cookieJarAll,
		".example.com\tTRUE\t/\tTRUE\t0\tsessionid\tq9Xk2vLm7Tz0pRw3sNd8", "\tTRUE\t\t\t\t\t\r")
}

func FuzzCliAll(f *testing.F) {
	fuzzAll(f, cliKeywords, cliAll,
		"docker login -u bob -p Dk9mX2qL7vR4 r", "mysql -p'S3cr3t!pw", "htpasswd -bc f u p", "openssl x -passout pass:",
		"curl -b 'connect.sid=s%3AQx8' h", "smbclient //s -U a%", "7z a -p")
}

func FuzzDSNAt(f *testing.F) {
	fuzzAt(f, []string{"@tcp", "@unix", "@udp"}, dsnAt,
		"root:S3cr3tPw9@tcp(127.0.0.1:3306)/app", ":@tcp(", "a:b:c@d@unix(")
}

func FuzzOracleAt(f *testing.F) {
	fuzzAt(f, []string{":thin:", "sqlplus"}, oracleAt,
		"jdbc:oracle:thin:scott/Tiger123x@db:1521:ORCL", "sqlplus /", "sqlplus a/")
}

func FuzzPuttyAt(f *testing.F) {
	fuzzAt(f, []string{"private-lines:"}, puttyAt,
		"Private-Lines: 2\nAAAAB3NzaC1yc2EAAAADAQABAAABAQ\nCq7zP2mL9vK4Wn8Rt5Yb1Hc3\nPrivate-MAC: 00",
		`Private-Lines: 1\nAAAAIFq7zP2mL9vK4Wn8Rt5Yb1\n`, "Private-Lines: 99999999999999999999")
}

func FuzzPEMBase64At(f *testing.F) {
	fuzzAt(f, []string{"ls0tls1"}, pemBase64At,
		"key: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlF", "LS0tLS1CRUdJTi", "xLS0tLS1CRUdJTiBQ")
}

func FuzzURLTokenAt(f *testing.F) {
	fuzzAt(f, []string{"://"}, urlTokenAt,
		"https://9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c@o1.ingest.sentry.io/2", "://@", "a://xxxxxxxxxxxxxxxxxxxx1@")
}

func FuzzDiscordAt(f *testing.F) {
	fuzzAt(f, []string{"discord", "bot"}, discordAt,
		"bot token MTE0OTg3NjU0MzIxMDk4NzY1NA.GaBcDe.q7Zr2Lm9Xw4Kp1Vb8Nc3Hd6Jf0Sg5Ta7UeXyZ", "discordM", "bot N.", "robot O")
}

// FuzzValueShapes: the loops that replaced the value regexps agree with them.
func FuzzValueShapes(f *testing.F) {
	dotted := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)
	lower := regexp.MustCompile(`^[a-z]{1,12}$`)
	lettersRe := regexp.MustCompile(`^[A-Za-z]+$`)
	for _, s := range []string{"settings.CLIENT_SECRET", "a.b", "a..b", ".a", "a.", "1a.b", "abc", "abcdefghijklm", "Bearer", "x\xe1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if dottedIdent(v) != dotted.MatchString(v) || lowerWord(v) != lower.MatchString(v) || letters(v) != lettersRe.MatchString(v) {
			t.Fatalf("%q: dotted %v/%v lower %v/%v letters %v/%v", v, dottedIdent(v), dotted.MatchString(v),
				lowerWord(v), lower.MatchString(v), letters(v), lettersRe.MatchString(v))
		}
	})
}
