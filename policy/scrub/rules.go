package scrub

import (
	"bytes"
	"encoding/base64"
	"regexp"
	"strings"
)

// scrubBuiltin is a built-in rule with the refinements extra rules lack.
type scrubBuiltin struct {
	rule      Rule
	back      int // how far before its keyword a match can begin; default 1
	multiline bool
	at        func(text string, ks, ke int) []int
	all       func(text string, ks, ke int) []found
	valid     func(w string, loc []int, secret string) bool
}

// prefixRule builds a rule for a token recognised by its own prefix.
func prefixRule(kind, pattern string, minEntropy float64, keywords ...string) scrubBuiltin {
	return scrubBuiltin{rule: Rule{Kind: kind, Pattern: pattern, SecretGroup: 1, Keywords: keywords, MinEntropy: minEntropy}}
}

// contextRule builds a rule for a secret recognised by nearby context.
func contextRule(kind, pattern string, minEntropy float64, valid func(string, []int, string) bool, keywords ...string) scrubBuiltin {
	b := prefixRule(kind, pattern, minEntropy, keywords...)
	b.valid = valid
	return b
}

// tokenEnd is a token's right edge when \b does not fit (tokens ending in - or /).
const tokenEnd = `(?:[^A-Za-z0-9_\-]|$)`

var scrubBuiltins = []scrubBuiltin{
	// Cloud providers.
	contextRule("aws-access-key-id", `\b((?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})\b`, 3.0, notExample, "akia", "asia", "abia", "acca", "a3t"),
	prefixRule("aws-secret-access-key", `(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)["']?[ \t]*(?:=|:|=>)[ \t]*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`, 3.5,
		"secret_access_key", "secretaccesskey", "aws_secret_key", "awssecretkey", "aws_secret"),
	prefixRule("google-api-key", `\b(AIza[0-9A-Za-z_\-]{35})`+tokenEnd, 3.0, "aiza"),
	prefixRule("google-oauth-secret", `\b(GOCSPX-[A-Za-z0-9_\-]{28})`+tokenEnd, 3.0, "gocspx-"),
	prefixRule("google-oauth-token", `\b(ya29\.[0-9A-Za-z_\-]{20,})`, 3.0, "ya29."),
	prefixRule("google-refresh-token", `\b(1//0[A-Za-z0-9_\-]{40,})`, 3.0, "1//0"),
	prefixRule("azure-storage-key", `(?i)AccountKey=([A-Za-z0-9+/]{86}==)`, 3.5, "accountkey="),
	prefixRule("azure-sas-signature", `[?&;]sig=([A-Za-z0-9%+/=]{30,})`, 3.5, "sig="),
	prefixRule("digitalocean-token", `\b(do[por]_v1_[a-f0-9]{64})\b`, 3.0, "dop_v1_", "doo_v1_", "dor_v1_"),
	contextRule("heroku-api-key", `(?i)heroku[^\n]{0,40}?\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b`, 3.0, nil, "heroku"),
	prefixRule("heroku-api-key", `\b(HRKU-[A-Za-z0-9_\-]{60,})`, 3.0, "hrku-"),

	// Source hosting and package registries.
	prefixRule("github-pat", `\b(ghp_[A-Za-z0-9]{36,255})\b`, 3.0, "ghp_"),
	prefixRule("github-oauth-token", `\b(gho_[A-Za-z0-9]{36,255})\b`, 3.0, "gho_"),
	prefixRule("github-app-token", `\b(gh[us]_[A-Za-z0-9]{36,255})\b`, 3.0, "ghu_", "ghs_"),
	prefixRule("github-refresh-token", `\b(ghr_[A-Za-z0-9]{36,255})\b`, 3.0, "ghr_"),
	prefixRule("github-fine-grained-pat", `\b(github_pat_[A-Za-z0-9_]{60,255})\b`, 3.0, "github_pat_"),
	prefixRule("gitlab-token", `\b(gl(?:pat|dt|ptt|rt|cbt|oas|imt|ft|agent)-[A-Za-z0-9_\-]{20,})`, 3.0,
		"glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "gloas-", "glimt-", "glft-", "glagent-"),
	prefixRule("npm-token", `\b(npm_[A-Za-z0-9]{36})\b`, 3.0, "npm_"),
	prefixRule("pypi-token", `\b(pypi-[A-Za-z0-9_\-]{50,})`, 3.0, "pypi-"),
	prefixRule("docker-pat", `\b(dckr_pat_[A-Za-z0-9_\-]{20,})`, 3.0, "dckr_pat_"),
	contextRule("docker-config-auth", `"auth"[ \t]*:[ \t]*"([A-Za-z0-9+/]{8,}={0,2})"`, 0, validBasic, `"auth"`),
	prefixRule("huggingface-token", `\b(hf_[A-Za-z]{34})\b`, 3.0, "hf_"),
	prefixRule("databricks-token", `\b(dapi[a-f0-9]{32}(?:-\d)?)\b`, 3.0, "dapi"),
	prefixRule("pulumi-token", `\b(pul-[a-f0-9]{40})\b`, 3.0, "pul-"),
	prefixRule("terraform-cloud-token", `\b([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70})`, 3.0, ".atlasv1.").from(16),
	// Service tokens carry their config's name: dp.st.prd.xxxx.
	prefixRule("doppler-token", `\b(dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_\-]{1,40}\.)?[A-Za-z0-9]{40,44})\b`, 3.0, "dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
	prefixRule("1password-service-account-token", `\b(ops_eyJ[A-Za-z0-9+/_\-]{100,}={0,3})`, 3.0, "ops_eyj"),
	prefixRule("1password-secret-key", `\b(A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})\b`, 3.0, "a3-"),
	prefixRule("vault-token", `\b(hv[sb]\.[A-Za-z0-9_\-]{24,})`, 3.0, "hvs.", "hvb."),
	contextRule("vault-token", `(?i)vault[^\n]{0,40}?\b(s\.[A-Za-z0-9]{24})\b`, 3.0, nil, "vault"),

	// AI providers. Anthropic comes first so it names sk-ant- keys.
	prefixRule("anthropic-api-key", `\b(sk-ant-[A-Za-z0-9_\-]{20,})`, 3.0, "sk-ant-"),
	prefixRule("groq-api-key", `\b(gsk_[A-Za-z0-9]{40,60})\b`, 3.0, "gsk_"),
	prefixRule("replicate-api-token", `\b(r8_[A-Za-z0-9]{30,50})\b`, 3.0, "r8_"),
	contextRule("openai-api-key", `\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,})`, 3.5, validMixed, "sk-"),

	// Messaging, payments, SaaS.
	// xox?- tokens of every kind, and refresh tokens (xoxe.xoxp-1-…, xoxe-1-…).
	prefixRule("slack-token", `\b(xox[a-z](?:\.xox[a-z])?-[0-9A-Za-z\-]{10,})`, 3.0, "xox"),
	// Chat webhooks with the token in the path: Teams, Feishu/Lark,
	// Mattermost and Rocket.Chat (/hooks/ID[/TOKEN]).
	prefixRule("teams-webhook", `/IncomingWebhook/([0-9a-f]{32})/`, 3.0, "/incomingw"),
	prefixRule("feishu-webhook", `/open-apis/bot/v2/hook/([0-9A-Za-z\-]{20,})`, 3.0, "/open-apis/"),
	contextRule("chat-webhook", `/hooks/([A-Za-z0-9]{20,}(?:/[A-Za-z0-9]{20,})?)\b`, 3.0, validHasDigit, "/hooks/"),
	prefixRule("slack-app-token", `\b(xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)`, 3.0, "xapp-"),
	prefixRule("slack-webhook", `hooks\.slack\.com/(?:services|workflows)/([A-Za-z0-9+/]{30,})`, 3.0, "hooks.slack.com"),
	prefixRule("discord-webhook", `discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d+/([A-Za-z0-9_\-]{60,})`, 3.0, "discord"),
	// A bot token: base64 of the bot's id, a timestamp, an HMAC.
	prefixRule("discord-bot-token", `(?i)(?:discord|\bbot\b)[^\n]{0,80}?(?-i:\b([MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}))`+tokenEnd, 3.0, "discord", "bot").parse(discordAt),
	// Telegram tokens, also inside a Bot API path (/bot123:AA…/sendMessage).
	prefixRule("telegram-bot-token", `(?:\b|bot)(\d{5,12}:AA[0-9A-Za-z_\-]{33})`+tokenEnd, 3.0, ":aa").from(16),
	prefixRule("telegram-bot-token", `/bot(\d{5,12}:[0-9A-Za-z_\-]{30,40})`+tokenEnd, 3.0, "/bot"),
	prefixRule("stripe-key", `\b((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,247})\b`, 3.0, "sk_live_", "rk_live_", "sk_test_", "rk_test_"),
	prefixRule("stripe-webhook-secret", `\b(whsec_[A-Za-z0-9+/=]{24,})`, 3.0, "whsec_"),
	prefixRule("braintree-token", `\b(access_token\$(?:production|sandbox|development|qa)\$[a-z0-9]{16}\$[a-f0-9]{32})\b`, 3.0, "access_token$"),
	prefixRule("braintree-tokenization-key", `\b((?:production|sandbox)_[a-z0-9]{8}_[a-z0-9]{16})\b`, 3.0, "production_", "sandbox_"),
	prefixRule("square-token", `\b(sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,43}|EAAA[A-Za-z0-9_\-]{60})`, 3.0, "sq0atp-", "sq0csp-", "eaaa"),
	prefixRule("shopify-token", `\b(shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})\b`, 3.0, "shpat_", "shpss_", "shpca_", "shppa_"),
	contextRule("twilio-key", `(?i)twilio[^\n]{0,60}?\b((?:SK)?[0-9a-f]{32})\b`, 3.0, nil, "twilio"),
	prefixRule("sendgrid-api-key", `\b(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})`, 3.0, "sg."),
	prefixRule("mailgun-api-key", `\b(key-[0-9a-f]{32})\b`, 3.0, "key-"),
	prefixRule("postman-api-key", `\b(PMAK-[a-f0-9]{24}-[a-f0-9]{34})\b`, 3.0, "pmak-"),
	prefixRule("newrelic-api-key", `\b(NRAK-[A-Z0-9]{27})\b`, 3.0, "nrak-"),
	prefixRule("grafana-token", `\b(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})`, 3.0, "glsa_", "glc_"),
	prefixRule("notion-token", `\b(secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,50})\b`, 3.0, "secret_", "ntn_"),
	prefixRule("figma-token", `\b(fig[dourh]_[A-Za-z0-9_\-]{38,})`, 3.0, "figd_", "figo_", "figu_"),
	prefixRule("linear-api-key", `\b(lin_api_[A-Za-z0-9]{40})\b`, 3.0, "lin_api_"),
	prefixRule("sentry-token", `\b(sntry[su]_[A-Za-z0-9+/=_]{40,})`, 3.0, "sntrys_", "sntryu_"),
	prefixRule("age-secret-key", `\b(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})\b`, 3.0, "age-secret-key-1"),

	// Structural secrets.
	prefixRule("jwt", `\b(ey[A-Za-z0-9_\-]{10,}\.ey[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})`, 3.0, "eyj"),
	{
		// The body is redacted, up to the END line or, in a key cut short
		// (head, truncated output), as far as it looks like base64.
		rule: Rule{Kind: "private-key", Pattern: `-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----((?s:.*?))-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----`,
			SecretGroup: 1, Keywords: []string{"private key"}},
		at: pemAt,
	},
	{
		rule: Rule{Kind: "url-password", Pattern: `(?i)\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@"'<>]{0,100}:([^\s:/@"'<>]{1,200})@[a-z0-9.\-\[_]`,
			SecretGroup: 1, Keywords: []string{"://"}},
		at:    urlPasswordAt,
		valid: func(_ string, _ []int, s string) bool { return !placeholder(s) },
	},
	{
		rule: Rule{Kind: "url-token", Pattern: `(?i)\b[a-z][a-z0-9+.\-]{1,20}://([A-Za-z0-9_.~%\-]{20,200})@[a-z0-9.\-\[_]`,
			SecretGroup: 1, Keywords: []string{"://"}},
		at: urlTokenAt,
	},
	{
		rule: Rule{Kind: "dsn-password", Pattern: `[^\s:"'@]+:([^\s"']+)@(?:tcp6?|unix|udp)\(`,
			SecretGroup: 1, Keywords: []string{"@tcp", "@unix", "@udp"}},
		at: dsnAt,
	},
	{
		rule: Rule{Kind: "dsn-password", Pattern: `(?i)(?:jdbc:oracle:thin:|sqlplus\s+)[^/\s]+/([^@\s]+)`,
			SecretGroup: 1, Keywords: []string{":thin:", "sqlplus"}},
		at: oracleAt,
	},
	{
		rule: Rule{Kind: "cookie", Pattern: `(?i)(?:set-)?cookies?["']?\s*[:=]\s*(.*)`, Keywords: []string{"cookie"}},
		all:  cookieAll,
	},
	{
		rule: Rule{Kind: "cookie", Pattern: `\t(?:TRUE|FALSE)\t.*\t([^\t]*)$`, Keywords: []string{"\ttrue\t", "\tfalse\t"}},
		all:  cookieJarAll,
	},
	{
		rule: Rule{Kind: "cli-password", Pattern: `(?i)\b(?:docker|mysql|sshpass|openssl|keytool)\s.*`, Keywords: cliKeywords},
		all:  cliAll,
	},
	{
		rule: Rule{Kind: "private-key", Pattern: `Private-Lines:\s*\d+\s*\n((?:[A-Za-z0-9+/=]+\n)+)`,
			SecretGroup: 1, Keywords: []string{"private-lines:"}},
		at: puttyAt,
	},
	{
		rule: Rule{Kind: "private-key", Pattern: `\b(LS0tLS1CRUdJTi[A-Za-z0-9+/=]+)`, SecretGroup: 1, Keywords: []string{"ls0tls1"}},
		at:   pemBase64At,
	},
	contextRule("private-key", `(?i)client-key-data["']?[ \t]*[:=][ \t]*["']?([A-Za-z0-9+/=]{16,})`, 0, nil, "key-data").from(8),
	// crypt(3) hashes (shadow, htpasswd), LDAP {SCHEME} hashes, Django's
	// and Werkzeug's: the whole hash is the secret.
	prefixRule("password-hash", `(\$(?:2[abxy]?)\$\d\d\$[./A-Za-z0-9]{53})`, 0, "$2"),
	prefixRule("password-hash", `(\$(?:1|5|6|apr1|md5|sha1)\$(?:rounds=\d+\$)?[./A-Za-z0-9]{0,64}\$[./A-Za-z0-9]{20,})`, 0,
		"$1$", "$5$", "$6$", "$apr1$", "$md5$", "$sha1$"),
	prefixRule("password-hash", `(\$(?:y|gy|7)\$[./A-Za-z0-9]+\$[./A-Za-z0-9$]{20,})`, 0, "$y$", "$gy$", "$7$"),
	prefixRule("password-hash", `(\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/.=-]+\$[A-Za-z0-9+/.=-]{16,})`, 0, "$argon2"),
	prefixRule("password-hash", `(?i)(\{(?:SSHA|SHA|SSHA256|SHA256|SSHA512|SHA512|SMD5|MD5|CRYPT|PBKDF2[A-Z0-9-]*|ARGON2)\}[A-Za-z0-9+/=.$,-]{20,})`, 0,
		"{ssha", "{sha", "{smd5", "{md5", "{crypt", "{pbkdf2", "{argon2"),
	prefixRule("password-hash", `\b((?:pbkdf2_sha256|pbkdf2_sha1|bcrypt_sha256|argon2|scrypt|sha1|md5)\$[A-Za-z0-9$=+/.,]{20,})`, 0,
		"pbkdf2_sha", "bcrypt_sha", "argon2$", "scrypt$").from(16),
	prefixRule("password-hash", `\b((?:pbkdf2:sha(?:1|256|512)(?::\d+)?|scrypt:\d+:\d+:\d+)\$[A-Za-z0-9]+\$[a-f0-9]{32,})`, 0, "pbkdf2:sha", "scrypt:"),
	contextRule("authorization", `(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|basic|token|bot|apikey|api-key|sso-key|key|digest|negotiate|otoken)[ \t]+)?([A-Za-z0-9._~+/=:\-]{8,})`, 2.5, validTokenish, "authorization"),
	contextRule("bearer-token", `(?i)\bbearer[ \t]+([A-Za-z0-9\-._~+/]{8,}=*)`, 3.0, validTokenish, "bearer"),
	contextRule("basic-auth", `(?i)\bbasic[ \t]+([A-Za-z0-9+/]{8,}={0,2})`, 0, validBasic, "basic"),
	contextRule("cli-password", `(?:^|[\s'"])(?:-u|--user)[ \t=]+['"]?[^\s:'"]+:([^\s'"]+)`, 0, func(_ string, _ []int, s string) bool { return !placeholder(s) }, "-u", "--user"),
	contextRule("cli-password", `\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p([^\s'"]{4,})`, 0, func(_ string, _ []int, s string) bool { return !placeholder(s) }, "mysql", "mariadb"),
	contextRule("cli-password", `\bsshpass\s+-p\s*['"]?([^\s'"]+)`, 0, func(_ string, _ []int, s string) bool { return !placeholder(s) }, "sshpass"),
	// The value runs to its delimiter, however long: a cap would leave
	// the rest of a long value in clear.
	contextRule("password", `(?i)([a-z0-9_.\-]*(?:pass|pwd|secret|token|api[_.\-]?key|access[_.\-]?key|auth[_.\-]?key|private[_.\-]?key|credentials?)[a-z0-9_.\-]*)["']?[ \t]*(?:=|:=|:|=>)[ \t]*["']?([^\s"'\x60,;<>\[\]{}()\\]{6,})`,
		0, nil, // genericAt applies validGeneric, with its entropy floor of 2 for all but passwords
		"pass", "pwd", "secret", "token", "api_key", "api-key", "apikey", "api.key",
		"access_key", "access-key", "accesskey", "auth_key", "auth-key", "authkey", "private_key", "privatekey", "private-key", "credential", "session", "sessid").group(2).parse(genericAt),
	// New puts it after the config's rules. What the generic
	// rule leaves: names it does not know as a secret's
	// (AccountKey, creds, client_id) and glue it does not read (a type,
	// a line break, "is", a comma between arguments). keyword.go.
	{rule: Rule{Kind: keywordKind, Pattern: `(?i)[a-z0-9_.\-]*(?:key|token|secret|auth|cred|pass|pwd|id)[a-z0-9_.\-]*.{0,48}?(\S{4,})`,
		Keywords: keywordLits}, all: keywordAll},
}

// from sets how far before its keyword a match can begin.
func (b scrubBuiltin) from(n int) scrubBuiltin {
	b.back = n
	return b
}

// parse replaces the rule's regexp by a parser anchored at the keyword.
func (b scrubBuiltin) parse(at func(text string, ks, ke int) []int) scrubBuiltin {
	b.at = at
	return b
}

// group sets the capture group holding the secret.
func (b scrubBuiltin) group(n int) scrubBuiltin {
	b.rule.SecretGroup = n
	return b
}

var ()

// The value shapes below were regexps; as loops they cost a few
// nanoseconds, and they run on every key=value candidate.

// dottedIdent reports a.b(.c…) with identifier parts: a reference to a
// setting (settings.CLIENT_SECRET), not a secret.
func dottedIdent(v string) bool {
	parts := 0
	for p := range strings.SplitSeq(v, ".") {
		if p == "" || '0' <= p[0] && p[0] <= '9' {
			return false
		}
		for i := 0; i < len(p); i++ {
			if c := p[i]; !('a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '_') {
				return false
			}
		}
		parts++
	}
	return parts >= 2
}

// lowerWord reports one lowercase word of at most 12 letters.
func lowerWord(v string) bool {
	if v == "" || len(v) > 12 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 'a' || v[i] > 'z' {
			return false
		}
	}
	return true
}

// letters reports a non-empty run of ASCII letters only.
func letters(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// placeholder reports values that stand for a secret rather than being one.
func placeholder(v string) bool {
	switch {
	case strings.HasPrefix(v, "$"), strings.HasPrefix(v, "%"), strings.HasPrefix(v, "{{"),
		strings.HasPrefix(v, "<"), strings.HasPrefix(v, markerPrefix):
		return true
	case maskFirst(v) && strings.Trim(v, "*xX.•#-") == "", examplePlaceholder(v):
		return true
	}
	return placeholderWord(v)
}

// maskFirst reports whether v can be all mask characters (*xX.•#-) by
// its first byte, so that the Unicode Trim runs only for those.
func maskFirst(v string) bool {
	if v == "" {
		return true
	}
	switch v[0] {
	case '*', 'x', 'X', '.', '#', '-', 0xE2: // 0xE2 starts '•'
		return true
	}
	return false
}

// placeholderWords are values that stand for no secret, in lowercase.
var placeholderWords = [...]string{"true", "false", "null", "nil", "none", "undefined", "redacted", "hidden", "masked",
	"secret", "password", "changeit_placeholder"}

// placeholderWord reports v is one of placeholderWords in any case.
// ASCII values (nearly all) are compared without lowering a copy; others
// go through strings.ToLower, whose Unicode folding (the Kelvin sign is
// a k) they need. A value over 64 bytes lowers to more than 20.
func placeholderWord(v string) bool {
	if len(v) > 64 {
		return false
	}
	ascii := true
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if !ascii {
		v = strings.ToLower(v)
	}
	for _, w := range placeholderWords {
		if len(w) == len(v) && (ascii && strings.EqualFold(v, w) || !ascii && v == w) {
			return true
		}
	}
	return false
}

// secretKeyName reports whether a key names a secret: its last secret
// word ends it, or is followed only by a suffix such as "key" or "value".
func secretKeyName(key string) bool {
	ok, _ := secretKeyKind(key)
	return ok
}

// secretKeyKind is secretKeyName, and whether the secret is a password
// (the name ends in password, passwd, passphrase, pass or pwd).
func secretKeyKind(key string) (ok, pass bool) {
	var buf [512]byte
	k := buf[:0]
	for i := 0; i < len(key) && len(k) < len(buf); i++ {
		switch c := key[i]; c {
		case '_', '-', '.':
		default:
			k = append(k, foldByte(c))
		}
	}
	end := lastKeywordEnd(k)
	if end < 0 {
		return false, false
	}
	if bytes.HasSuffix(k[:end], []byte("pass")) {
		for _, w := range notPass {
			if bytes.HasSuffix(k[:end], w) {
				return false, false
			}
		}
	}
	switch string(k[end:]) {
	case "", "key", "keybase", "value", "string", "str", "b64", "base64":
		h := k[:end]
		return true, string(k[end:]) != "key" && (bytes.HasSuffix(h, []byte("pass")) || bytes.HasSuffix(h, []byte("passwd")) ||
			bytes.HasSuffix(h, []byte("password")) || bytes.HasSuffix(h, []byte("passphrase")) || bytes.HasSuffix(h, []byte("pwd")))
	}
	return false, false
}

// notPass are words that end in "pass" and name no password.
var notPass = [][]byte{[]byte("bypass"), []byte("compass"), []byte("trespass"), []byte("overpass"),
	[]byte("underpass"), []byte("surpass"), []byte("flypass"), []byte("multipass"), []byte("onepass"), []byte("firstpass"), []byte("secondpass")}

// genericKeywords are the words that make a key name a secret's name.
var genericKeywords = []string{"password", "passwd", "passphrase", "pass", "pwd", "secret", "token", "apikey", "accesskey", "authkey", "privatekey", "credentials", "credential",
	"sessionid", "sessid", "sessionkey", "sessioncookie"}

// genericKeywordsByLast lists genericKeywords by their last byte.
var genericKeywordsByLast = func() (t [256][][]byte) {
	for _, k := range genericKeywords {
		c := k[len(k)-1]
		t[c] = append(t[c], []byte(k))
	}
	return t
}()

// lastKeywordEnd is the largest end of an occurrence of a generic keyword
// in k, or -1: walking back from the end, the first position where one of
// the keywords ending in that byte ends.
func lastKeywordEnd(k []byte) int {
	for e := len(k); e > 0; e-- {
		for _, kw := range genericKeywordsByLast[k[e-1]] {
			if bytes.HasSuffix(k[:e], kw) {
				return e
			}
		}
	}
	return -1
}

// fieldNameAt reports a NAME= field at text[i] whose name reads as a
// name (user=, remember_me=), not as a value with '=' inside it.
func fieldNameAt(text string, i int) bool {
	if !fieldAt(text, i) {
		return false
	}
	j := i + strings.IndexByte(text[i:], '=')
	return j-i <= 40 && slugLike(text[i:j])
}

// validGeneric accepts key=value pairs whose key names a secret (DB_PASSWORD,
// client_secret, apiKey, X-Api-Key) rather than something about one
// (token_type, max_tokens, secretName, passwordFile), and whose value is
// not a number, a path, a reference or a placeholder.
func validGeneric(w string, loc []int, v string) bool {
	ok, _ := validGenericName(w, loc, v)
	return ok
}

// validGenericName is validGeneric, and whether the key names a secret.
func validGenericName(w string, loc []int, v string) (ok, named bool) {
	key := w[loc[2]:loc[3]]
	named, pass := secretKeyKind(key)
	if !named || key == "PASS" && strings.Contains(w[loc[3]:loc[4]], ":") { // "--- PASS: TestName": a test's outcome
		return false, named
	}
	return validGenericValue(w, loc, v, key, pass), true
}

func validGenericValue(w string, loc []int, v, key string, pass bool) bool {
	if len(v) < 20 && statusKey(key) {
		return false // "InvalidToken: tok_12": an error's name and an id
	}
	if loc[5] < len(w) && w[loc[5]] == '(' {
		return false // a call: Password: os.Getenv("X")
	}
	if k := skipBlank(w, loc[5]); k > loc[5] && k+1 < len(w) && w[k] == '=' && w[k+1] != '=' {
		return false // a type: val api_TOKEN: String = "…"
	}
	if pass {
		// A password's value is one whatever its entropy: password:
		// "letmein", PGPASSWORD=postgres. Only placeholders, settings'
		// words and prose are not.
		tight := loc[4] > 0 && (w[loc[4]-1] == '=' || w[loc[4]-1] == ':')
		return !placeholder(v) && !configWord(v) && strings.Trim(v, v[:1]) != "" && !referenceValue(v) &&
			!(lowerWord(v) && !tight && proseAfter(w, loc[5])) && !notCredentialName(key)
	}
	switch {
	case placeholder(v), dottedIdent(v) && !randomTail(v), lowerWord(v):
		return false
	case strings.Trim(v, "0123456789") == "":
		return false
	case strings.HasPrefix(v, "/"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"), strings.HasPrefix(v, "~/"):
		return false
	case len(v) > 2 && v[1] == ':' && (v[2] == '\\' || v[2] == '/'):
		return false
	case strings.HasPrefix(v, "env:"), strings.HasPrefix(v, "file:"), strings.HasPrefix(v, "fd:"), strings.HasPrefix(v, "pass:"):
		return false // openssl's references; pass:VALUE is the command rule's
	}
	// csrf_token, authenticity_token; access_token=ACCESS_TOKEN; the
	// entropy floor last, as it costs most.
	return !notCredentialName(key) && !namedPlaceholder(v) && entropy(v) >= 2.0
}

// validHasDigit accepts values with a digit and a letter.
func validHasDigit(_ string, _ []int, v string) bool {
	return strings.ContainsAny(v, "0123456789") && strings.Trim(v, "0123456789/") != ""
}

// validMixed accepts random-looking tokens: a digit and a letter of each case.
func validMixed(_ string, _ []int, v string) bool {
	return strings.ContainsAny(v, "0123456789") &&
		strings.ContainsAny(v, "abcdefghijklmnopqrstuvwxyz") &&
		strings.ContainsAny(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// validTokenish rejects words and placeholders after Bearer/Authorization.
func validTokenish(_ string, _ []int, v string) bool {
	return !placeholder(v) && !letters(strings.TrimRight(v, ".:=-"))
}

// notExample rejects the documentation keys (AKIAIOSFODNN7EXAMPLE).
func notExample(_ string, _ []int, v string) bool {
	return !strings.HasSuffix(v, "EXAMPLE")
}

// validBasic accepts base64 that decodes to user:password.
func validBasic(_ string, _ []int, v string) bool {
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "="))
	}
	return err == nil && strings.IndexByte(string(b), ':') > 0
}

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// isValueByte reports bytes a generic secret value may hold.
func isValueByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r', '"', '\'', '`', ',', ';', '<', '>', '[', ']', '{', '}', '(', ')', '\\':
		return false
	}
	return true
}

func skipBlank(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return i
}

// genericAt parses KEY SEP VALUE around a keyword inside KEY, as the
// password rule's pattern describes: groups are the key and the value.
// Besides KEY=VALUE and KEY: VALUE it reads <KEY>VALUE</KEY> (XML), a
// flag with its value after a blank (--password VALUE) and .netrc's
// "password VALUE".
func genericAt(text string, ks, ke int) []int {
	a, b := ks, ke
	for a > 0 && ks-a < 128 && isKeyByte(text[a-1]) {
		a--
	}
	for b < len(text) && b-ke < 128 && isKeyByte(text[b]) {
		b++
	}
	if a > 0 && (text[a-1] == '<' || text[a-1] == ':') {
		if loc := xmlElementAt(text, a, b); loc != nil {
			if !validGeneric(text, loc, text[loc[4]:loc[5]]) {
				return nil
			}
			return loc
		}
	}
	i := b
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		i++
	}
	i = skipBlank(text, i)
	sep := true
	switch rest := text[i:]; {
	case strings.HasPrefix(rest, ":="), strings.HasPrefix(rest, "=>"):
		i += 2
	case strings.HasPrefix(rest, "="), strings.HasPrefix(rest, ":"):
		i++
	case i > b && i == skipBlank(text, b) && (text[a] == '-' || netrcPassword(text, a, b)):
		sep = false // --password VALUE, or .netrc's password VALUE
	default:
		if loc := nameValueAt(text, a, b); loc != nil {
			return loc
		}
		return keywordAt(text, a, b) // String clientSecret = "…", { "Token", "…" }, KEY\n = "…"
	}
	blank := skipBlank(text, i)
	skipped := blank > i
	i = blank
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		if !sep {
			// A quoted word: the value is all of it, blanks included.
			q := strings.IndexByte(text[i+1:lineEnd(text, i+1, 4<<10)], text[i])
			v, e := i+1, i+1+q
			if q < 6 {
				return nil
			}
			if probe := [6]int{a, e, a, b, v, e}; !validGeneric(text, probe[:], text[v:e]) {
				return nil
			}
			return []int{a, e, a, b, v, e}
		}
		i++
	} else if !sep && i < len(text) && (text[i] == '-' || fieldAt(text, i)) {
		return nil // the next flag, or a NAME=VALUE option (--secret id=npmrc)
	}
	v := i
	for i < len(text) && isValueByte(text[i]) {
		if text[i] == '&' && fieldAt(text, i+1) {
			break // the next field of a query string or form
		}
		i++
	}
	if i-v < 6 && v < len(text) && strings.IndexByte("|>\\=:`", text[v]) >= 0 {
		// token: |\n  VALUE, a JSON-escaped line break, ::=, `VALUE`
		return keywordAt(text, a, b)
	}
	if i-v < 6 && !(i-v >= 4 && credentialNameTier(text[a:b], false) == tierPass) || skipped && sep && fieldNameAt(text, v) {
		return nil // empty: what follows is the next field (password= user=bob)
	}
	// Checked here too so that the many rejected pairs allocate nothing.
	probe := [6]int{a, i, a, b, v, i}
	if ok, named := validGenericName(text, probe[:], text[v:i]); !ok {
		if k := skipBlank(text, i); !named || k > i && k+1 < len(text) && text[k] == '=' && text[k+1] != '=' {
			// A name this rule does not read (TENCENTCLOUD_SECRET_ID,
			// api_token_2), or a type (val api_TOKEN: String = "…"):
			// the keyword parser's, which knows more of both.
			return keywordAt(text, a, b)
		}
		return nil
	}
	return []int{a, i, a, b, v, i}
}

// nameValueAt reads a secret's name and value given as two fields:
// Kubernetes' "- name: DB_PASSWORD / value: …", .NET's <add
// key="Password" value="…"/>, JSON {"name": "token", "value": "…"}.
// The key at [a, b) must be the value of a name or key field.
func nameValueAt(text string, a, b int) []int {
	i := a
	if i > 0 && (text[i-1] == '"' || text[i-1] == '\'') {
		i--
	}
	for i > 0 && (text[i-1] == ' ' || text[i-1] == '\t') {
		i--
	}
	if i == 0 || text[i-1] != ':' && text[i-1] != '=' {
		return nil
	}
	i--
	if i > 0 && (text[i-1] == '"' || text[i-1] == '\'') {
		i--
	}
	n := i
	for n > 0 && i-n < 5 && isKeyByte(text[n-1]) {
		n--
	}
	if k := text[n:i]; !strings.EqualFold(k, "name") && !strings.EqualFold(k, "key") || !secretKeyName(text[a:b]) {
		return nil
	}
	// The value field follows within a few lines.
	area := text[b:min(len(text), b+256)]
	for off := 0; ; {
		j := indexFold(area[off:], "value")
		if j < 0 {
			return nil
		}
		k := b + off + j
		off += j + 5
		if k > 0 && isKeyByte(text[k-1]) || k+5 < len(text) && isKeyByte(text[k+5]) {
			continue
		}
		v, e := genericValue(text, k+5)
		if e == 0 {
			return nil
		}
		if probe := [6]int{a, e, a, b, v, e}; !validGeneric(text, probe[:], text[v:e]) {
			return nil
		}
		return []int{a, e, a, b, v, e}
	}
}

// genericValue parses SEP VALUE at text[i:], returning the value's
// extent, or e == 0.
func genericValue(text string, i int) (v, e int) {
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		i++
	}
	i = skipBlank(text, i)
	if i >= len(text) || text[i] != ':' && text[i] != '=' {
		return 0, 0
	}
	i = skipBlank(text, i+1)
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		i++
	}
	v = i
	for i < len(text) && isValueByte(text[i]) {
		i++
	}
	if i-v < 6 {
		return 0, 0
	}
	return v, i
}

// indexFold is strings.Index for an ASCII lowercase needle, ignoring case.
func indexFold(s, lower string) int {
	for i := 0; i+len(lower) <= len(s); i++ {
		if s[i]|0x20 == lower[0] && strings.EqualFold(s[i:i+len(lower)], lower) {
			return i
		}
	}
	return -1
}

// fieldAt reports whether a NAME= field begins at text[i].
func fieldAt(text string, i int) bool {
	j := i
	for j < len(text) && j-i < 64 && (isKeyByte(text[j]) || text[j] == '[' || text[j] == ']') {
		j++
	}
	if j == i || j >= len(text) || text[j] != '=' || '0' <= text[i] && text[i] <= '9' {
		return false
	}
	// base64 padding (eyJ0eXAi==) ends a value; it starts no field.
	return j+1 >= len(text) || isValueByte(text[j+1]) && text[j+1] != '='
}

// netrcPassword reports whether the word at [a, b) is the password token
// of a .netrc entry: "password" after a machine, default or login token.
func netrcPassword(text string, a, b int) bool {
	if text[a:b] != "password" || a > 0 && text[a-1] > ' ' {
		return false
	}
	// One pass over the words before it: the four tokens start with
	// distinct letters, so a word's first byte picks the one to compare.
	before := text[max(0, a-512):a]
	for j := 0; j < len(before); j++ {
		if j > 0 && before[j-1] > ' ' {
			continue
		}
		var tok string
		switch before[j] {
		case 'l':
			tok = "login"
		case 'm':
			tok = "machine"
		case 'd':
			tok = "default"
		case 'a':
			tok = "account"
		default:
			continue
		}
		if e := j + len(tok); e < len(before) && before[e] <= ' ' && before[j:e] == tok {
			return true
		}
	}
	return false
}

// xmlElementAt reads <KEY attrs>VALUE</ when the key at [a, b) names an
// element (also <ns:KEY>), with VALUE as CDATA or text.
func xmlElementAt(text string, a, b int) []int {
	o := a
	if o > 0 && text[o-1] == ':' { // a namespace prefix
		o--
		for o > 0 && a-o < 64 && isKeyByte(text[o-1]) {
			o--
		}
	}
	if o == 0 || text[o-1] != '<' {
		return nil
	}
	i := b
	for i < len(text) && i-b < 512 && text[i] != '>' && text[i] != '<' && text[i] != '\n' {
		i++
	}
	if i >= len(text) || text[i] != '>' || text[i-1] == '/' {
		return nil
	}
	i++
	if rest, ok := strings.CutPrefix(text[i:], "<![CDATA["); ok {
		e := strings.Index(rest, "]]>")
		if e < 0 {
			e = len(rest)
		}
		v := i + len("<![CDATA[")
		if e < 1 {
			return nil
		}
		return []int{o - 1, v + e, a, b, v, v + e}
	}
	i = skipSpace(text, i)
	v := i
	for i < len(text) && text[i] != '<' && text[i] != '\n' && text[i] != '\r' {
		i++
	}
	e := i
	for e > v && (text[e-1] == ' ' || text[e-1] == '\t') {
		e--
	}
	// The element must close: "<your-password-here>" is a placeholder,
	// not an element, and what follows it is not its value.
	if e-v < 6 || !strings.HasPrefix(text[skipSpace(text, i):], "</") {
		return nil
	}
	return []int{o - 1, e, a, b, v, e}
}

func skipSpace(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	return i
}

// statusKey reports key names that describe a secret's state rather than
// hold one: InvalidToken, expired_password, ErrMissingAPIKey.
func statusKey(key string) bool {
	k := strings.TrimLeft(key, "-_.")
	for _, p := range [...]string{"error", "err"} {
		if len(k) >= len(p) && strings.EqualFold(k[:len(p)], p) {
			k = strings.TrimLeft(k[len(p):], "-_.")
		}
	}
	for _, w := range statusWords {
		if len(k) >= len(w) && strings.EqualFold(k[:len(w)], w) {
			return true
		}
	}
	return false
}

var statusWords = []string{"invalid", "expired", "missing", "bad", "wrong", "unknown", "revoked", "malformed",
	"incorrect", "unauthorized", "unauthorised", "empty", "stale", "unsupported", "illegal", "duplicate",
	"mismatched", "forbidden", "denied", "rejected", "failed", "unrecognized", "unrecognised", "nonexistent"}

// urlPasswordAt parses scheme://user:password@ around the "://" at ks.
func urlPasswordAt(text string, ks, ke int) []int {
	a := ks
	for a > 0 && ks-a < 20 && (isKeyByte(text[a-1]) && text[a-1] != '_' || text[a-1] == '+') {
		a--
	}
	if ks-a < 2 || !('a' <= text[a]|0x20 && text[a]|0x20 <= 'z') {
		return nil
	}
	colon := -1
	i := ke
	for ; i < len(text) && i-ke < 8<<10; i++ {
		c := text[i]
		if c == '@' {
			break
		}
		if c == ':' && colon < 0 {
			colon = i
		}
		if c <= ' ' || strings.IndexByte("/?#\"'<>\\", c) >= 0 {
			return nil
		}
	}
	if i >= len(text) || text[i] != '@' || colon < 0 || i == colon+1 {
		return nil
	}
	return []int{a, i + 1, colon + 1, i}
}

var (
	rePEMHeader = regexp.MustCompile(`-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----$`)
	rePEMFooter = regexp.MustCompile(`^-----END[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----`)
	rePEMBody   = regexp.MustCompile(`^(?:[A-Za-z0-9+/=\s]|\\[nr]){16,}`)
)

const maxPEM = 64 << 10

// pemAt finds the body of a PEM private key whose header holds the
// "PRIVATE KEY" at [ks, ke).
func pemAt(text string, ks, ke int) []int {
	if !strings.HasPrefix(text[ke:], "-----") && !strings.HasPrefix(text[ke:], " BLOCK-----") {
		return nil
	}
	hdrEnd := ke + strings.Index(text[ke:], "-----") + 5
	h := rePEMHeader.FindStringIndex(text[max(0, ks-48):hdrEnd])
	if h == nil {
		return nil
	}
	start := max(0, ks-48) + h[0]
	area := text[hdrEnd:min(len(text), hdrEnd+maxPEM)]
	for off := 0; ; {
		i := strings.Index(area[off:], "-----END")
		if i < 0 {
			break
		}
		if f := rePEMFooter.FindStringIndex(area[off+i:]); f != nil {
			end := hdrEnd + off + i
			return []int{start, end + f[1], hdrEnd, end}
		}
		off += i + 8
	}
	if b := rePEMBody.FindStringIndex(area); b != nil {
		return []int{start, hdrEnd + b[1], hdrEnd, hdrEnd + b[1]}
	}
	return nil
}
