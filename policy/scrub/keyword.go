package scrub

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// Keyword-context credentials: values that are secrets because of the
// name before them, not their shape. A keyword hit (key, token, secret,
// auth, cred, pass, pwd, client_id…) starts the parser: it reads the
// name around the hit, the glue between name and value (quotes,
// separators, a type such as "string", a line break before "=", "is"),
// then the value, and keeps it only when the name holds a credential and
// the value fits one:
//
//   - a password's name (password, passwd, pwd, passphrase): any value
//     but an unmistakable placeholder, whatever its entropy;
//   - a secret's or key's name (api_key, AccountKey, client_secret,
//     authToken, creds): a value of credential characters with a
//     credential's entropy, not a name, path, URL, version or example;
//   - the ID half of a key pair (access_key_id, SecretId, client_id):
//     the same, and never a UUID (those are public ids).
//
// Names that hold something about a key rather than a key (public_key,
// csrf_token, next_page_token, primaryKey, key_name, token_type) are not
// credentials' names.

// keywordLits start the rule; most are also the generic rule's.
// Names with pass, pwd, secret or token are the generic rule's: it
// calls keywordAt where its own reading fails.
var keywordLits = append([]string{"key", "auth", "cred", "bearer",
	"client_id", "clientid", "client-id", "app_id", "appid"}, providerNames...)

// providerNames are services whose keys tools commonly print next to
// the service's name and nothing else ("mailgun 'key…'", "cloudflare:
// …"). Most are keywords of gitleaks' rules already, so they cost the
// automaton nothing; names that are everyday words (linear, sentry,
// docker) are left out.
var providerNames = []string{"github", "gitlab", "bitbucket", "heroku", "twilio", "mailgun", "mailchimp", "sendgrid",
	"datadog", "cloudflare", "algolia", "alibaba", "airtable", "asana", "atlassian", "confluence", "contentful",
	"dropbox", "facebook", "fastly", "hubspot", "intercom", "jfrog", "artifactory", "launchdarkly", "mapbox",
	"netlify", "newrelic", "okta", "plaid", "zendesk", "stripe", "slack", "openai", "shopify", "azure",
	"digitalocean", "vercel", "supabase", "pinecone", "mixpanel", "kraken"}

// keywordKind names the keyword rule's findings; New orders the rule
// of that kind after the config's own rules.
const keywordKind = "credential"

type nameTier int

const (
	tierNone     nameTier = iota
	tierPass              // a password
	tierSecret            // a secret, token or API key
	tierKey               // some key
	tierID                // the public half of a key pair, when it is not a UUID
	tierProvider          // a service's name: only a value of a key's shape, after a few words at most
)

// keywordMaxGlue bounds the bytes between a name and its value.
const keywordMaxGlue = 48

// keywordAll finds the value bound to the credential name holding the
// keyword at [ks, ke).
func keywordAll(text string, ks, ke int) []found {
	// Most hits are inside a word (Author, passed, keyboard, tokenizer,
	// githubusercontent): the letters right after the keyword reject
	// them before anything else is read.
	if ke < len(text) && 'a' <= text[ke] && text[ke] <= 'z' && !nameGoesOn(text[ke:min(len(text), ke+8)]) {
		return nil
	}
	b := ke
	for b < len(text) && b-ke < 64 && isNameByte(text[b]) {
		b++
	}
	if !glueAhead(text, ks, ke, b) {
		return nil
	}
	a := ks
	for a > 0 && ks-a < 64 && isNameByte(text[a-1]) {
		a--
	}
	if a > 0 && text[a-1] == '\\' && a < ks && (text[a] == 'n' || text[a] == 't' || text[a] == 'r') {
		a++ // after a JSON-escaped line break: "[default]\nservice_key = …"
	} else if a > 0 && (text[a-1] == '/' || text[a-1] == '\\') {
		return nil // a file: /run/secrets/db_password, C:\secrets\db_password
	}
	v, e, kind := keywordFrom(text, a, b, true)
	if e <= v {
		return nil
	}
	return []found{{v, e, kind}}
}

// keywordAt is the keyword parser for a name the generic rule found at
// [a, b) and could not read (a type, a comma, a line break before the
// value): its submatch indexes, the value in group 2.
func keywordAt(text string, a, b int) []int {
	if !glueAhead(text, a, b, b) {
		return nil
	}
	v, e, _ := keywordFrom(text, a, b, false)
	if e <= v {
		return nil
	}
	return []int{a, e, a, b, v, e}
}

// keywordFrom reads the value bound to the name at [a, b) and its kind;
// e <= v when there is none.
func keywordFrom(text string, a, b int, provider bool) (v, e int, kind string) {
	tier := credentialNameTier(text[a:b], provider)
	if tier == tierNone || text[a:b] == "PASS" || text[a:b] == "FAIL" { // "--- PASS: TestName": a test's outcome
		return 0, 0, ""
	}
	if tier == tierProvider && a > 0 && (text[a-1] == ':' || text[a-1] == '.' || text[a-1] == '@') {
		return 0, 0, "" // arn:aws:…, api.github.com, user@github.com
	}
	if a > 0 && text[a-1] == ':' && inMarker(text, a) {
		return 0, 0, "" // [REDACTED:password]
	}
	// A name given as a value is a name only as the key of a pair (<add
	// key="ApiKey" value="…"/>); otherwise it is a value ("token_type":
	// "bearer").
	pair := false
	if valueAt(text, a, b) {
		if pair = pairValue(text, b) > 0; !pair {
			return 0, 0, ""
		}
	}
	var quoted, tight, loose bool
	if pair {
		v, e = genericValue(text, pairValue(text, b))
		quoted = e > 0
	} else if rest, ok := strings.CutPrefix(text[b:], "</key>"); ok {
		// A property list: <key>API_KEY</key> <string>VALUE</string>.
		i := b + len("</key>") + (len(rest) - len(trimBlankEscapes(rest)))
		if strings.HasPrefix(text[i:], "<string>") {
			v = i + len("<string>")
			e = v + max(0, strings.IndexByte(text[v:min(len(text), v+4<<10)], '<'))
			quoted = true
		}
	} else {
		v, e, quoted, tight, loose = keywordValue(text, a, b, tier == tierProvider)
	}
	if e <= v {
		return 0, 0, ""
	}
	val := text[v:e]
	if loose && tier != tierPass && tier != tierID {
		tier = tierProvider // the strictest shape
	}
	if loose && tier != tierProvider || !keywordValueOK(tier, text[a:b], val, quoted, tight, text, e) {
		return 0, 0, ""
	}
	if notCredentialName(text[a:b]) {
		return 0, 0, "" // csrf_token, public_key, next_page_token
	}
	kind = "credential"
	switch {
	case strings.EqualFold(text[a:b], "bearer"):
		kind = "bearer-token"
	case tier == tierPass:
		kind = "password"
	}
	return v, e, kind
}

func isNameByte(c byte) bool { return nameByte[c] }

// nameByte marks the bytes of a name; foldAlnum maps letters and digits
// to their lowercase and the rest to 0. Tables: these run on every
// keyword hit.
var nameByte, foldAlnum = func() (n [256]bool, f [256]byte) {
	for c := 0; c < 256; c++ {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			n[c], f[c] = true, byte(c)
		case 'A' <= c && c <= 'Z':
			n[c], f[c] = true, byte(c+'a'-'A')
		case c == '_' || c == '.' || c == '-':
			n[c] = true
		}
	}
	return n, f
}()

// nameTierOf says what kind of credential a name holds. The name is
// folded to lowercase letters and digits; its credential word must end
// it, save for a number (api_key2) or a suffix such as "value".
func nameTierOf(name string, provider bool) nameTier {
	tier := credentialNameTier(name, provider)
	if tier != tierNone && notCredentialName(name) {
		return tierNone
	}
	return tier
}

// credentialNameTier is nameTierOf without the names of things that
// are keys in another sense; keywordAll checks those last, as few
// names get that far.
func credentialNameTier(name string, provider bool) nameTier {
	// Only the name's end decides (its last 24 letters and digits,
	// folded), and for a provider its start.
	var buf [24]byte
	n := len(buf)
	for i := len(name) - 1; i >= 0 && n > 0; i-- {
		if c := foldAlnum[name[i]]; c != 0 {
			n--
			buf[n] = c
		}
	}
	k := buf[n:]
	if hasSuf(k, "b64") || hasSuf(k, "base64") {
		k = k[:len(k)-len("b64")]
		k = bytes.TrimSuffix(k, []byte("bas"))
	}
	for len(k) > 0 && '0' <= k[len(k)-1] && k[len(k)-1] <= '9' {
		k = k[:len(k)-1]
	}
	if len(k) == 0 {
		return tierNone
	}
	var suf string
	switch k[len(k)-1] {
	case 'e':
		suf = "value"
	case 'g':
		suf = "string"
	case 'r':
		suf = "str"
	case 'x':
		suf = "hex"
	case 'w':
		suf = "raw"
	case 'n':
		suf = "plain"
	}
	if suf != "" && len(k) > len(suf) && hasSuf(k, suf) {
		k = k[:len(k)-len(suf)]
	}
	if t := credentialTier(k); t != tierNone || !provider {
		return t
	}
	// mailgun, MAILGUN_KEY2, Stripe: a provider's name, then at most a
	// short word.
	if name != "" && len(name) <= 24 {
		c := name[0] | 0x20
		for _, p := range providersByFirst[c] {
			if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
				return tierProvider
			}
		}
	}
	return tierNone
}

func credentialTier(k []byte) nameTier {
	if len(k) == 0 {
		return tierNone
	}
	// By the last byte first: most names hit end in none of the words.
	switch k[len(k)-1] {
	case 'r':
		if string(k) == "bearer" {
			return tierPass // bearer=…, bearer: …
		}
	case 'd':
		switch {
		case hasSuf(k, "password"), hasSuf(k, "passwd"), hasSuf(k, "pwd"):
			return tierPass
		case hasSuf(k, "keyid"), hasSuf(k, "secretid"), hasSuf(k, "clientid"), hasSuf(k, "appid"), hasSuf(k, "accessid"):
			return tierID
		}
	case 'e':
		if hasSuf(k, "passphrase") {
			return tierPass
		}
	case 's':
		switch {
		case hasSuf(k, "pass") && !notPassName(k):
			return tierPass
		case hasSuf(k, "credentials"), hasSuf(k, "creds"):
			return tierSecret
		}
	case 't':
		if hasSuf(k, "secret") {
			return tierSecret
		}
	case 'n':
		if hasSuf(k, "token") {
			return tierSecret
		}
	case 'l':
		if hasSuf(k, "credential") {
			return tierSecret
		}
	case 'h':
		if string(k) == "auth" || hasSuf(k, "auth") && len(k) > 4 && !hasSuf(k, "oauth") {
			return tierSecret
		}
	case 'y':
		switch {
		case hasSuf(k, "apikey"):
			return tierSecret
		case hasSuf(k, "key"):
			return tierKey
		}
	}
	return tierNone
}

// providersByFirst lists providerNames by their first byte.
var providersByFirst = func() (t [256][]string) {
	for _, p := range providerNames {
		t[p[0]] = append(t[p[0]], p)
	}
	return t
}()

// notCredentialName reports names of form, pagination and database
// tokens and keys, and of public halves: csrf_token,
// __RequestVerificationToken, next_page_token, public_key.
func notCredentialName(name string) bool {
	var buf [128]byte
	k := buf[:0]
	for i := 0; i < len(name) && len(k) < len(buf); i++ {
		if c := name[i] | 0x20; 'a' <= c && c <= 'z' || '0' <= name[i] && name[i] <= '9' {
			k = append(k, c)
		}
	}
	return notCredentialFolded(k)
}

func notCredentialFolded(k []byte) bool {
	for _, w := range [...]string{"csrf", "xsrf", "authenticity", "verificationtoken", "nonce"} {
		if bytes.Contains(k, []byte(w)) {
			return true
		}
	}
	for len(k) > 0 && '0' <= k[len(k)-1] && k[len(k)-1] <= '9' {
		k = k[:len(k)-1]
	}
	if len(k) == 0 {
		return false
	}
	for _, w := range notCredentialByLast[k[len(k)-1]] {
		if hasSuf(k, w) {
			return true
		}
	}
	return false
}

// notCredentialByLast lists notCredentialNames by their last byte.
var notCredentialByLast = func() (t [256][]string) {
	for _, w := range notCredentialNames {
		t[w[len(w)-1]] = append(t[w[len(w)-1]], w)
	}
	return t
}()

func notPassName(k []byte) bool {
	for _, w := range notPass {
		if bytes.HasSuffix(k, w) {
			return true
		}
	}
	return false
}

// hasSuf is strings.HasSuffix for a byte slice, without a copy.
func hasSuf(k []byte, suf string) bool {
	return len(k) >= len(suf) && string(k[len(k)-len(suf):]) == suf
}

// notCredentialNames end names of things that are keys or tokens in
// another sense: public halves, form and pagination tokens, database and
// cache keys, keyboard keys, words that end in "key".
var notCredentialNames = []string{
	"publickey", "pubkey", "publishablekey", "sitekey", "publictoken", "publishabletoken",
	"csrftoken", "xsrftoken", "csrfkey", "authenticitytoken", "verificationtoken", "csrf", "xsrf",
	"nexttoken", "pagetoken", "continuationtoken", "paginationtoken", "cursortoken", "synctoken", "resumetoken",
	"primarykey", "foreignkey", "sortkey", "partitionkey", "rowkey", "rangekey", "hashkey", "cachekey",
	"idempotencykey", "dedupkey", "dedupekey", "objectkey", "lastevaluatedkey", "startkey", "exclusivestartkey",
	"signingkey", "gpgkey", "sshkey", "hostkey", "fingerprintkey", "kmskey", "kmskeyid", "keyvaultkey",
	"monkey", "turkey", "donkey", "whiskey", "hockey", "jockey", "lackey", "hotkey", "passkey",
	"tokentype", "granttype", "authtype",
}

// keywordValue reads the glue after a name at [a, b) and returns the
// value it binds: [v, e), whether it was quoted, and whether it follows
// its separator directly (KEY=VALUE, no blank).
func keywordValue(text string, a, b int, provider bool) (v, e int, quoted, tight, loose bool) {
	i := b
	bound, words, lines, nl, typed := false, 0, 0, -1, false
	flag := text[a] == '-' || provider // --api-key VALUE; mailgun 'VALUE'
	maxWords := 2
	if provider {
		maxWords = 3
	}
	lastSep := -1
	// An unquoted value on the line after its separator is the next
	// line's own field, unless the separator starts a YAML block (| >).
	unquoted := func(i int) (int, int, bool, bool, bool) {
		if nl > lastSep && (lastSep < 0 || text[lastSep] != '|' && text[lastSep] != '>') {
			return 0, 0, false, false, false
		}
		if typed {
			return 0, 0, false, false, false // after a type, a literal: String key = "…"
		}
		v, e, t := unquotedValue(text, i, lastSep)
		return v, e, false, t, false
	}
	for i < len(text) && i-b <= keywordMaxGlue {
		c := text[i]
		switch {
		case c == ' ' || c == '\t':
			if flag && !bound {
				bound = true
			}
			i++
		case c == '\n' || c == '\r':
			if c == '\n' {
				lines++
				nl = i
			}
			if lines > 1 || words > 0 {
				return 0, 0, false, false, false
			}
			i++
		case c == '\\' && i+1 < len(text) && (text[i+1] == 'n' || text[i+1] == 'r' || text[i+1] == 't'):
			// A line break or tab as JSON writes it: a tool's output
			// reaches the scrubber inside the result's JSON.
			if text[i+1] == 'n' {
				if lines++; lines > 1 || words > 0 {
					return 0, 0, false, false, false
				}
				nl = i
			}
			i += 2
		case c == '\\':
			i++ // an escaped quote: \"token\": \"…\"
		case c == '"' || c == '\'' || c == '`':
			if !bound && words == 0 && strings.Trim(text[b:i], "\\") == "" {
				i++ // the name's closing quote, escaped or not
				continue
			}
			if !bound && words == 0 && !flag {
				return 0, 0, false, false, false
			}
			q := c
			v = i + 1
			end := lineEnd(text, v, 2<<10)
			e = v
			for e < end && text[e] != q && text[e] != '\\' {
				e++
			}
			if e < end && text[e] == '\\' {
				// The closing quote escaped once or more: \" or \\\" in JSON
				// inside JSON.
				k := e
				for k < end && text[k] == '\\' {
					k++
				}
				if k >= end || text[k] != q {
					return 0, 0, false, false, false
				}
			} else if e >= end {
				return 0, 0, false, false, false
			}
			if k := skipBlank(text, e+1); k < len(text) && text[k] == ':' && (k+1 >= len(text) || text[k+1] != '/') {
				return 0, 0, false, false, false // the next key: "expires_in": 3599
			}
			return v, e, true, false, false
		case c == '{' && i+1 < len(text) && (text[i+1] == '{' || text[i+1] == '%'):
			return 0, 0, false, false, false // a template: {{ .Values.apiKey }}
		case c == '=' || c == ':' || c == ',' || c == '>' || c == '{' || c == '|' || c == '?':
			bound = true
			lastSep = i
			i++
		case c == '&' && bound:
			return 0, 0, false, false, false // empty: password=&user=bob
		case c == '(' || c == ')' || c == '[' || c == ']' || c == '+' || c == '.' || c == '&' || c == '*':
			if bound && (c == '*' || c == '.') {
				return unquoted(i)
			}
			i++
		case 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9':
			j := i
			for j < len(text) && j-i <= 16 && (isNameByte(text[j]) && text[j] != '.' && text[j] != '-') {
				j++
			}
			w := text[i:j]
			if bound && (text[i-1] == ' ' || text[i-1] == '\t') && fieldNameAt(text, i) {
				return 0, 0, false, false, false // empty: what follows is the next field (password= user=bob)
			}
			if bound && !typed {
				if k := skipBlank(text, j); k > j && k+1 < len(text) && text[k] == '=' && text[k+1] != '=' {
					typed = true // a type after the name's colon: api_TOKEN: String = "…"
					i = j
					continue
				}
			}
			if bound || flag && i > b && text[i-1] == ' ' {
				if w == "return" || w == "new" {
					words++
					i = j
					continue
				}
				return unquoted(i)
			}
			if w == "is" {
				bound = true
				i = j
				continue
			}
			if words == 0 && lines == 0 && j-i > 12 && text[i-1] == ' ' {
				// "api key 3f9…": no separator, so only a value of a
				// key's own shape will do.
				v, e, _ := unquotedValue(text, i, -1)
				return v, e, false, false, true
			}
			if words++; words > maxWords || j-i > 12 || lines > 0 {
				return 0, 0, false, false, false
			}
			typed = !flag
			i = j
		case c == '-' && i > b && text[i-1] == ' ' && i+1 < len(text) && text[i+1] == ' ':
			bound = true // token - 'VALUE'
			lastSep = i
			i++
		default:
			if bound {
				return unquoted(i)
			}
			return 0, 0, false, false, false
		}
	}
	return 0, 0, false, false, false
}

// unquotedValue reads a value from i to its delimiter; tight says it
// follows its separator at sep directly.
func unquotedValue(text string, i, sep int) (v, e int, tight bool) {
	v = i
	for i < len(text) && i-v < 4<<10 && isValueByte(text[i]) {
		if text[i] == '&' && fieldAt(text, i+1) {
			break
		}
		i++
	}
	if i > v && (text[i-1] == '.' || text[i-1] == ':') && !(i-1 > v && text[i-2] == '.') {
		i-- // the end of a sentence; "abc.." and "abc..." stay whole, as the examples they are
	}
	return v, i, sep >= 0 && sep == v-1
}

// keywordValueOK applies the tier's checks to a candidate value that
// ends at e in text.
func keywordValueOK(tier nameTier, name, v string, quoted, tight bool, text string, e int) bool {
	// The length floors of the tests at the end, first: most values
	// fail them and need no placeholder test.
	switch {
	case tier == tierPass:
		if len(v) < 4 {
			return false
		}
	case len(v) < 12 || len(v) > 4<<10, tier == tierProvider && len(v) < 16:
		return false // credentialShaped's bounds
	}
	if placeholder(v) || strings.HasPrefix(v, markerPrefix) {
		return false
	}
	if !quoted && e < len(text) && text[e] == '(' {
		return false // a call: os.Getenv("X")
	}
	if repeatsName(name, v) || fileLike(v) {
		return false // AccountKey=storageaccountkeybase64encoded; Key: photos/sample.jpg
	}
	if len(v) < 20 && statusKey(name) {
		return false // "InvalidToken: tok_12": an error's name and an id
	}
	if tier == tierPass {
		if len(v) < 4 || configWord(v) || strings.Trim(v, v[:1]) == "" || referenceValue(v) {
			return false
		}
		if !quoted && !tight && lowerWord(v) && proseAfter(text, e) {
			return false
		}
		return true
	}
	if tier == tierProvider {
		return len(v) >= 16 && !hexOnly(v) && credentialShaped(tierKey, v) && entropy(v) >= 3.5 && !base64Text(v)
	}
	return credentialShaped(tier, v) && !(tier == tierKey && base64Text(v))
}

// base64Text reports base64 of readable text (a sentence, JSON, a
// config): data a key-named field carries, not a key, which decodes to
// bytes without spaces.
func base64Text(v string) bool {
	if len(v) < 16 || len(v) > 4<<10 {
		return false
	}
	var buf [3 << 10]byte
	n, err := base64.StdEncoding.Decode(buf[:], []byte(v))
	if err != nil {
		if n, err = base64.RawStdEncoding.Decode(buf[:], []byte(strings.TrimRight(v, "="))); err != nil {
			return false
		}
	}
	d := buf[:n]
	spaces, letters := 0, 0
	for _, c := range d {
		switch {
		case c == ' ' || c == '\n' || c == '\t':
			spaces++
		case 'a' <= c|0x20 && c|0x20 <= 'z':
			letters++
		case c < 0x20 || c > 0x7e:
			return false
		}
	}
	return spaces > 0 && (spaces+letters)*10 >= 6*len(d)
}

// referenceValue reports values that point at a secret instead of
// holding it: paths, URLs, settings, environment lookups.
func referenceValue(v string) bool {
	switch {
	case strings.HasPrefix(v, "/"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"), strings.HasPrefix(v, "~/"),
		strings.Contains(v, "://"), strings.HasPrefix(v, "env:"), strings.HasPrefix(v, "file:"), strings.HasPrefix(v, "arn:"),
		strings.HasPrefix(v, "vault:"), strings.HasPrefix(v, "secret:"), strings.HasPrefix(v, "op://"):
		return true
	case len(v) > 2 && v[1] == ':' && (v[2] == '\\' || v[2] == '/'):
		return true
	}
	// settings.DB_PASSWORD is a reference; s.ZC9Ecf4M5g9o34Q6RkzGsj0z
	// (a Vault token) only looks like one.
	return dottedIdent(v) && !randomTail(v)
}

// randomTail reports a last dotted part of 16 or more characters that
// mixes digits and both cases, as generated tokens do and names do not.
func randomTail(v string) bool {
	p := v[strings.LastIndexByte(v, '.')+1:]
	return len(p) >= 16 && strings.ContainsAny(p, "0123456789") &&
		strings.ContainsAny(p, "abcdefghijklmnopqrstuvwxyz") && strings.ContainsAny(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// credentialShaped reports whether v looks like a key or token: long
// enough, credential characters only, a credential's entropy and mix of
// characters, and not a name, a version, a UUID where an id is named, a
// hash label or a documentation example.
func credentialShaped(tier nameTier, v string) bool {
	// keywordValueOK has ruled out placeholders, examples included.
	if len(v) < 12 || len(v) > 4<<10 || referenceValue(v) || namedPlaceholder(v) {
		return false
	}
	var lower, upper, digit, other int
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'a' <= c && c <= 'z':
			lower++
		case 'A' <= c && c <= 'Z':
			upper++
		case '0' <= c && c <= '9':
			digit++
		case strings.IndexByte("+/=_-.~:!@#$%^*", c) >= 0:
			other++
		default:
			return false
		}
	}
	if lower+upper == 0 || digit == 0 && (lower == 0 || upper == 0 || len(v) < 20) {
		return false
	}
	if uuidShaped(v) && tier == tierID {
		return false
	}
	if strings.Contains(v, "@") && strings.Contains(v[strings.IndexByte(v, '@'):], ".") {
		return false // an e-mail address
	}
	lp := strings.ToLower(v[:min(len(v), 8)])
	for _, p := range [...]string{"sha1:", "sha256:", "sha512:", "sha1-", "sha256-", "sha384-", "sha512-", "md5:", "sha-256=", "h1:"} {
		if strings.HasPrefix(lp, p) {
			return false
		}
	}
	if slugLike(v) || hostLike(v) {
		return false
	}
	min := 3.0
	if tier == tierKey || tier == tierID {
		min = 3.2
	}
	return entropy(v) >= min
}

// uuidShaped reports the 8-4-4-4-12 hex form.
func uuidShaped(v string) bool {
	if len(v) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := v[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !('0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f') {
			return false
		}
	}
	return true
}

// slugLike reports names and versions: every part between separators is
// a word of letters (with a vowel, or a single CamelCase identifier), a
// number or a short hex id, as in build-cache-3f2a9c1e, DOC_Vector_5_32,
// SalesResults-1.2, v1.2.3-beta, NormalBrushGradient1.
func slugLike(v string) bool {
	parts, words, hashes := 0, 0, 0
	// The separators are ASCII, so a byte split is FieldsFunc's split.
	for start := 0; start < len(v); {
		end := start
		for end < len(v) && !slugSep(v[end]) {
			end++
		}
		if end == start {
			start++
			continue
		}
		p := v[start:end]
		start = end + 1
		parts++
		switch {
		case wordLike(p):
			words++
		case allDigits(p), len(p) <= 8 && hexOnly(p), versionPart(p):
		case len(p) >= 32 && hexOnly(p), hexWord(p):
			// A content hash after a name: Linux-node-<sha256>, also
			// with the next line's first word glued on where lines
			// are joined.
			hashes++
		default:
			return false
		}
	}
	return parts > 0 && (hashes == 0 || words >= 2)
}

func slugSep(c byte) bool { return c == '-' || c == '_' || c == '.' || c == '/' || c == ':' }

// wordLike reports letters forming a word, with trailing digits:
// lowercase or uppercase with vowels (cache, DOC), or CamelCase humps of
// a capital and two or more lowercase letters (SalesResults).
func wordLike(p string) bool {
	p = trimDigits(p)
	if p == "" {
		return false
	}
	vowels := 0
	for i := 0; i < len(p); i++ {
		c := p[i] | 0x20
		if c < 'a' || c > 'z' {
			return false
		}
		if strings.IndexByte("aeiouy", c) >= 0 {
			vowels++
		}
	}
	if vowels == 0 || vowels*5 < len(p) {
		return false
	}
	if allUpper(p) || strings.ToLower(p) == p {
		return true
	}
	i := 0
	for i < len(p) && p[i] >= 'a' {
		i++
	}
	for i < len(p) {
		if p[i] > 'Z' {
			return false
		}
		j := i + 1
		for j < len(p) && p[j] >= 'a' {
			j++
		}
		if j-i < 3 {
			return false
		}
		i = j
	}
	return true
}

func allUpper(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] < 'A' || p[i] > 'Z' {
			return false
		}
	}
	return true
}

func hexOnly(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i] | 0x20; !('0' <= p[i] && p[i] <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// versionPart reports v12, rc1, beta2 and the like.
func versionPart(p string) bool {
	l := trimDigits(p)
	for _, w := range versionWords {
		if len(w) == len(l) && asciiFoldEq(l, w) {
			return true
		}
	}
	return false
}

var versionWords = [...]string{"v", "rc", "beta", "alpha", "snapshot", "release", "final", "ga", "m", "b", "a", "r", "p", "x", "u"}

// asciiFoldEq reports s == lower after ASCII lowercasing of s; lower is
// ASCII letters. (No Unicode fold: strings.ToLower maps only the Kelvin
// sign to ASCII, and no word above has a k.)
func asciiFoldEq(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// trimDigits is strings.TrimRight(p, "0123456789") without its set.
func trimDigits(p string) string {
	for p != "" && '0' <= p[len(p)-1] && p[len(p)-1] <= '9' {
		p = p[:len(p)-1]
	}
	return p
}

// allDigits is strings.Trim(p, "0123456789") == "".
func allDigits(p string) bool { return trimDigits(p) == "" }

// hostLike reports a host name (1234-abc.apps.googleusercontent.com):
// a dotted value whose last part is a top-level domain.
func hostLike(v string) bool {
	i := strings.LastIndexByte(v, '.')
	if i < 0 {
		return false
	}
	switch strings.ToLower(v[i+1:]) {
	case "com", "net", "org", "io", "dev", "cloud", "app", "co", "ai", "local", "internal", "localhost":
		return true
	}
	return false
}

// repeatWindow is how far from a finding its value is looked for again.
const repeatWindow = 2 << 10

// repeatSpans adds the other occurrences, near each finding, of a value
// a rule found: a secret printed twice ('X' | 'X', a key then its use)
// is a secret both times, though only one has the context that shows it.
func repeatSpans(text string, spans []scrubSpan) []scrubSpan {
	n := len(spans)
	for k := 0; k < n && k < 64; k++ {
		sp := spans[k]
		if sp.prio < 0 || sp.end-sp.start < 12 || sp.end-sp.start > 1024 {
			continue // known values are found everywhere already; a key block is printed once
		}
		val := text[sp.start:sp.end]
		lo, hi := max(0, sp.start-repeatWindow), min(len(text), sp.end+repeatWindow)
		for off := lo; off < hi; {
			j := strings.Index(text[off:hi], val)
			if j < 0 {
				break
			}
			at := off + j
			off = at + len(val)
			if at == sp.start || !tokenEdges(text, at, off) {
				continue
			}
			spans = append(spans, scrubSpan{at, off, sp.prio, sp.marker})
		}
	}
	return spans
}

// tokenEdges reports whether text[a:b] is a whole token, not part of a
// longer one.
func tokenEdges(text string, a, b int) bool {
	in := func(c byte) bool {
		return 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '+' || c == '/'
	}
	return (a == 0 || !in(text[a-1])) && (b == len(text) || !in(text[b]))
}

// valueAt reports whether the word at [a, b) is a whole quoted value:
// "…": "word".
func valueAt(text string, a, b int) bool {
	i := a
	if i == 0 || text[i-1] != '"' && text[i-1] != '\'' || b >= len(text) || text[b] != text[i-1] {
		return false
	}
	i--
	for i > 0 && (text[i-1] == ' ' || text[i-1] == '\t') {
		i--
	}
	return i > 0 && (text[i-1] == ':' || text[i-1] == '=')
}

// inMarker reports whether a is inside a marker of an earlier pass.
func inMarker(text string, a int) bool {
	lo := max(0, a-len(markerPrefix)-64)
	i := strings.LastIndex(text[lo:a], markerPrefix)
	return i >= 0 && strings.IndexByte(text[lo+i:a], ']') < 0
}

// pairValue finds, after the key at b of a name/key field, the value
// field of the same record (Kubernetes env, .NET appSettings, JSON
// name/value) and returns the offset after its name, or 0.
func pairValue(text string, b int) int {
	i := b
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		i++
	}
	j := strings.LastIndexAny(text[max(0, b-80):b], ":=")
	if j < 0 {
		return 0
	}
	j += max(0, b-80)
	f := j
	if f > 0 && (text[f-1] == '"' || text[f-1] == '\'') {
		f--
	}
	n := f
	for n > 0 && f-n < 5 && isKeyByte(text[n-1]) {
		n--
	}
	if k := text[n:f]; !strings.EqualFold(k, "name") && !strings.EqualFold(k, "key") {
		return 0
	}
	area := text[i:min(len(text), i+256)]
	for off := 0; ; {
		k := indexFold(area[off:], "value")
		if k < 0 {
			return 0
		}
		at := i + off + k
		off += k + 5
		if at > 0 && isKeyByte(text[at-1]) || at+5 < len(text) && isKeyByte(text[at+5]) {
			continue
		}
		return at + 5
	}
}

// repeatsName reports a value that spells its own name (token=TOKEN,
// AccountKey=storageaccountkeybase64encoded): a stand-in.
func repeatsName(name, v string) bool {
	var nb, vb [128]byte
	n, w := nb[:0], vb[:0]
	for i := 0; i < len(name) && len(n) < len(nb); i++ {
		if c := name[i] | 0x20; 'a' <= c && c <= 'z' {
			n = append(n, c)
		}
	}
	for i := 0; i < len(v) && len(w) < len(vb); i++ {
		if c := v[i] | 0x20; 'a' <= c && c <= 'z' {
			w = append(w, c)
		}
	}
	return len(n) >= 6 && bytes.Contains(w, n)
}

// fileLike reports a file name or path by its extension.
func fileLike(v string) bool {
	i := strings.LastIndexByte(v, '.')
	if i <= 0 {
		return false
	}
	switch strings.ToLower(v[i+1:]) {
	case "pem", "key", "crt", "cer", "der", "p12", "pfx", "jks", "keystore", "keytab", "pub", "gpg", "asc",
		"json", "yaml", "yml", "toml", "ini", "conf", "cfg", "env", "txt", "csv", "log", "xml", "html", "md",
		"jpg", "jpeg", "png", "gif", "svg", "pdf", "zip", "gz", "tgz", "tar", "jar", "war", "exe", "dll", "so",
		"sh", "py", "js", "ts", "go", "rb", "java", "php", "db", "sqlite", "bin", "dat", "img", "iso":
		return true
	}
	return false
}

// trimBlankEscapes trims leading blanks, raw or JSON-escaped (\n, \t).
func trimBlankEscapes(s string) string {
	for {
		switch {
		case s != "" && (s[0] == ' ' || s[0] == '\t' || s[0] == '\r' || s[0] == '\n'):
			s = s[1:]
		case len(s) > 1 && s[0] == '\\' && (s[1] == 'n' || s[1] == 't' || s[1] == 'r'):
			s = s[2:]
		default:
			return s
		}
	}
}

// hexWord reports 32 or more hex digits followed by a word.
func hexWord(p string) bool {
	i := 0
	for i < len(p) && ('0' <= p[i] && p[i] <= '9' || 'a' <= p[i] && p[i] <= 'f') {
		i++
	}
	return i >= 32 && i < len(p) && wordLike(p[i:])
}

// nameGoesOn reports whether the lowercase letters after a keyword
// continue a credential's name (pass|word, key|id, cred|entials,
// token|value) rather than another word (auth|or, pass|ed).
func nameGoesOn(rest string) bool {
	var ws []string
	switch rest[0] {
	case 'w':
		ws = []string{"word", "wd"}
	case 'p':
		ws = []string{"phrase", "plain"}
	case 'i':
		ws = []string{"id"}
	case 'v':
		ws = []string{"value"}
	case 's':
		return true // secrets, creds, str, string: the name's ending decides
	case 'k':
		ws = []string{"key"}
	case 't':
		ws = []string{"token"}
	case 'e':
		ws = []string{"ential"}
	case 'b':
		ws = []string{"b64", "base64"}
	case 'h':
		ws = []string{"hex"}
	case 'r':
		ws = []string{"raw"}
	}
	for _, w := range ws {
		if strings.HasPrefix(rest, w) {
			return true
		}
	}
	return false
}

// glueAhead is a cheap look at what follows the name ending at b: the
// start of a separator, a quote or a line break, or, after a blank, a
// word that keywordValue may read ("is", a type before '=', a long
// token, a flag's or a provider's value). Most keyword hits in prose
// fail it and cost nothing more.
func glueAhead(text string, ks, ke, b int) bool {
	i := b
	for i < len(text) && i-b < 4 && (text[i] == '"' || text[i] == '\'' || text[i] == ']' || text[i] == ')' ||
		text[i] == '\\' && !(i+1 < len(text) && (text[i+1] == 'n' || text[i+1] == 'r' || text[i+1] == 't'))) {
		i++
	}
	blank := i
	for i < len(text) && i-blank < 16 && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i >= len(text) {
		return false
	}
	switch c := text[i]; {
	case strings.IndexByte("=:,>{(|?-.+*\"'`<[\\\n\r", c) >= 0:
		return true
	case i == blank || !('a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9'):
		return false
	}
	// A word after a blank.
	j := i
	for j < len(text) && j-i <= 16 && isNameByte(text[j]) {
		j++
	}
	switch {
	case j-i > 12, j-i == 2 && text[i] == 'i' && text[i+1] == 's':
		return true // a long token; "key is …"
	case flagName(text, ks):
		return true // --api-key VALUE
	}
	k := j
	for k < len(text) && k-j < 4 && (text[k] == ' ' || text[k] == '\t') {
		k++
	}
	if k < len(text) && strings.IndexByte("=:\"'", text[k]) >= 0 {
		return true // a type: serviceToken string = "…"
	}
	// A provider's name reads a few words on.
	for _, p := range providersByFirst[text[ks]|0x20] {
		if ke-ks == len(p) && strings.EqualFold(text[ks:ke], p) {
			return true
		}
	}
	return false
}

// flagName reports whether the name holding the keyword at ks starts
// with '-'.
func flagName(text string, ks int) bool {
	a := ks
	for a > 0 && ks-a < 64 && isNameByte(text[a-1]) {
		a--
	}
	return text[a] == '-'
}

// proseAfter reports more words after a value ending at e on its line
// or in its string: "password: must be eight characters" is prose, not
// a password.
func proseAfter(text string, e int) bool {
	rest := strings.TrimLeft(text[e:lineEnd(text, e, 256)], " \t")
	return rest != "" && rest[0] != '#' && rest[0] != '"' && rest[0] != '\'' && rest[0] != '\\'
}
