package scrub

// Parsers for credential formats a regexp describes badly: cookie
// headers, command lines, DSNs, PuTTY key files, base64-wrapped PEM keys
// and tokens used as a URL's user name. Each starts at a keyword hit and
// reads only what it needs around it.

import (
	"encoding/base64"
	"strings"
)

// found is a secret at text[a:b]; kind, when set, names it instead of
// the rule's kind.
type found struct {
	a, b int
	kind string
}

// ---- cookies ----

// cookieAll finds the values of session and auth cookies after a
// "cookie" keyword: Cookie and Set-Cookie headers, curl's -b/--cookie,
// a cookie jar line (name<TAB>value) and document.cookie = "…".
func cookieAll(text string, ks, ke int) []found {
	i := ke
	if i < len(text) && text[i]|0x20 == 's' { // cookies
		i++
	}
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		i++
	}
	i = skipBlank(text, i)
	switch {
	case i < len(text) && (text[i] == ':' || text[i] == '='):
		i++
	case i > ke: // --cookie VALUE
	default:
		return nil
	}
	i = skipBlank(text, i)
	quote := byte(0)
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		quote = text[i]
		i++
	}
	end := lineEnd(text, i, 8<<10)
	if quote != 0 {
		if q := strings.IndexByte(text[i:end], quote); q >= 0 {
			end = i + q
		}
	}
	return cookiePairs(text, i, end)
}

// cookiePairs finds the session values among name=value pairs in
// text[i:end].
func cookiePairs(text string, i, end int) []found {
	var out []found
	for i < end {
		// One name=value pair, up to ';'.
		j := i
		for j < end && text[j] != ';' {
			j++
		}
		if eq := strings.IndexByte(text[i:j], '='); eq > 0 {
			name := strings.TrimSpace(text[i : i+eq])
			v, ve := i+eq+1, j
			for v < ve && text[v] == ' ' {
				v++
			}
			for ve > v && (text[ve-1] == ' ' || text[ve-1] == '\r') {
				ve--
			}
			if sessionCookie(name) && cookieValue(text[v:ve]) {
				out = append(out, found{v, ve, "cookie"})
			}
		}
		i = j + 1
	}
	return out
}

// cookieJarAll reads a Netscape cookie jar line (curl -c, wget): seven
// tab-separated fields, the last two the cookie's name and value. The
// keyword is a jar's TRUE/FALSE flag field.
func cookieJarAll(text string, ks, ke int) []found {
	ls := strings.LastIndexByte(text[:ks], '\n') + 1
	le := lineEnd(text, ks, 8<<10)
	line := text[ls:le]
	if strings.Count(line, "\t") != 6 {
		return nil
	}
	var f [7]string
	for i := range 6 {
		j := strings.IndexByte(line, '\t')
		f[i], line = line[:j], line[j+1:]
	}
	f[6] = strings.TrimRight(line, "\r")
	if !strings.EqualFold(f[1], "true") && !strings.EqualFold(f[1], "false") || !sessionCookie(f[5]) || !cookieValue(f[6]) {
		return nil
	}
	return []found{{le - len(line), le - len(line) + len(f[6]), ""}}
}

// sessionCookie reports cookie names that hold a session or a login:
// sessionid, JSESSIONID, connect.sid, _gh_sess, laravel_session,
// __Secure-next-auth.session-token, remember_user_token, XSRF-TOKEN.
func sessionCookie(name string) bool {
	n := strings.ToLower(name)
	for _, w := range [...]string{"sess", "auth", "token", "jwt", "login", "logged", "remember", "identity", "credential",
		"secret", "passw", "apikey", "api_key", "api-key", "access", "refresh", "csrf", "xsrf", "aspxanon", ".aspnetcore."} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return n == "sid" || strings.HasSuffix(n, ".sid") || strings.HasSuffix(n, "_sid") || strings.HasSuffix(n, "-sid") ||
		n == "ssid" || n == "hsid" || n == "apisid" || n == "sapisid" || n == "__host-sid" || n == "__secure-sid"
}

// cookieValue accepts values that can be a session: long enough, not a
// deletion marker or a placeholder.
func cookieValue(v string) bool {
	v = strings.Trim(v, `"`)
	return len(v) >= 8 && !placeholder(v) && !lowerWord(v) && strings.Trim(v, "0123456789") != "" &&
		v != "deleted" && !strings.EqualFold(v, "invalid")
}

// lineEnd is the end of the line holding i, at most max bytes on. A line
// also ends at a break JSON escapes (\n): a tool's output is a JSON
// string, one line however many it prints.
func lineEnd(text string, i, max int) int {
	end := min(len(text), i+max)
	if j := strings.IndexByte(text[i:end], '\n'); j >= 0 {
		end = i + j
	}
	if j := strings.Index(text[i:end], `\n`); j >= 0 {
		end = i + j
	}
	return end
}

// ---- command lines ----

// flagKind says where a password flag's value is.
type flagKind uint8

const (
	flagNext       flagKind = 1 << iota // the next word: -p VALUE
	flagAttached                        // in the same word: -pVALUE
	flagEquals                          // after '=': --password=VALUE
	flagAfterSep                        // after the first ':', '%' or ',' of the value: -u user:pass
	flagPassPrefix                      // openssl's pass:VALUE
	flagPositional                      // htpasswd -b: the last of the positional words
	flagCookie                          // a cookie string: curl -b 'sid=…'
)

type cliSpec struct {
	flags map[string]flagKind
	// needs is a word that must come before the flag: docker -p is a
	// port mapping unless the command is docker login.
	needs string
}

var (
	loginFlags = map[string]flagKind{"-p": flagNext | flagAttached | flagEquals, "--password": flagNext | flagEquals}
	mongoFlags = map[string]flagKind{"-p": flagNext, "--password": flagNext | flagEquals}
	mysqlFlags = map[string]flagKind{"-p": flagAttached, "--password": flagEquals}
	ldapFlags  = map[string]flagKind{"-w": flagNext | flagAttached}
	sqlFlags   = map[string]flagKind{"-P": flagNext | flagAttached}
	javaFlags  = map[string]flagKind{"-storepass": flagNext, "-keypass": flagNext, "-srcstorepass": flagNext,
		"-deststorepass": flagNext, "-srckeypass": flagNext, "-destkeypass": flagNext, "-new": flagNext}
)

// cliSpecs lists commands that take a password as an argument, by name.
var cliSpecs = map[string]cliSpec{
	"docker": {loginFlags, "login"}, "podman": {loginFlags, "login"}, "nerdctl": {loginFlags, "login"},
	"buildah": {loginFlags, "login"}, "helm": {loginFlags, "login"}, "oras": {loginFlags, "login"},
	"crane": {loginFlags, "login"}, "regctl": {loginFlags, "login"},
	"skopeo": {map[string]flagKind{"-p": flagNext, "--password": flagNext | flagEquals,
		"--creds": flagNext | flagEquals | flagAfterSep, "--src-creds": flagNext | flagEquals | flagAfterSep,
		"--dest-creds": flagNext | flagEquals | flagAfterSep}, ""},
	"sshpass": {map[string]flagKind{"-p": flagNext | flagAttached}, ""},
	"mysql":   {mysqlFlags, ""}, "mysqldump": {mysqlFlags, ""}, "mysqladmin": {mysqlFlags, ""}, "mariadb": {mysqlFlags, ""},
	"mysqlimport": {mysqlFlags, ""}, "mysqlshow": {mysqlFlags, ""}, "mysqlcheck": {mysqlFlags, ""},
	"mariadb-dump": {mysqlFlags, ""},
	"redis-cli":    {map[string]flagKind{"-a": flagNext, "--pass": flagNext, "--pass=": flagEquals}, ""},
	"mongo":        {mongoFlags, ""}, "mongosh": {mongoFlags, ""}, "mongodump": {mongoFlags, ""}, "mongorestore": {mongoFlags, ""},
	"mongoexport": {mongoFlags, ""}, "mongoimport": {mongoFlags, ""},
	"ldapsearch": {ldapFlags, ""}, "ldapmodify": {ldapFlags, ""}, "ldapadd": {ldapFlags, ""}, "ldapdelete": {ldapFlags, ""},
	"ldapwhoami": {ldapFlags, ""}, "ldappasswd": {ldapFlags, ""}, "ldapcompare": {ldapFlags, ""},
	"sqlcmd": {sqlFlags, ""}, "bcp": {sqlFlags, ""}, "osql": {sqlFlags, ""}, "isql": {sqlFlags, ""},
	"zip": {map[string]flagKind{"-P": flagNext, "--password": flagNext}, ""}, "unzip": {map[string]flagKind{"-P": flagNext}, ""},
	"7z": {map[string]flagKind{"-p": flagAttached}, ""}, "7za": {map[string]flagKind{"-p": flagAttached}, ""},
	"keytool": {javaFlags, ""}, "jarsigner": {javaFlags, ""},
	"openssl": {map[string]flagKind{"-passin": flagNext | flagPassPrefix, "-passout": flagNext | flagPassPrefix,
		"-pass": flagNext | flagPassPrefix, "-k": flagNext, "-password": flagNext | flagPassPrefix}, ""},
	"ssh-keygen": {map[string]flagKind{"-N": flagNext, "-P": flagNext}, ""},
	"xfreerdp":   {map[string]flagKind{"/p:": flagAttached}, ""}, "wlfreerdp": {map[string]flagKind{"/p:": flagAttached}, ""},
	"smbclient": {map[string]flagKind{"-U": flagNext | flagAfterSep, "--user": flagNext | flagEquals | flagAfterSep}, ""},
	"lftp":      {map[string]flagKind{"-u": flagNext | flagAfterSep}, ""},
	"curl": {map[string]flagKind{"-U": flagNext | flagAfterSep, "--proxy-user": flagNext | flagAfterSep,
		"--oauth2-bearer": flagNext, "-b": flagNext | flagCookie, "--cookie": flagNext | flagCookie}, ""},
	"wget":     {map[string]flagKind{"--header": flagNext | flagEquals | flagCookie}, ""},
	"htpasswd": {map[string]flagKind{"-b": flagPositional}, ""},
	"rclone":   {map[string]flagKind{"--password": flagNext}, ""},
}

// cliKeywords find the commands of cliSpecs: one keyword per family
// ("mongo" finds mongosh and mongodump), since every keyword state makes
// the automaton every byte walks larger; "7z" alone is common in base64.
var cliKeywords = []string{"docker", "podman", "nerdctl", "buildah", "helm", "oras", "crane", "regctl", "skopeo",
	"sshpass", "mysql", "mariadb", "redis-cli", "mongo", "ldap", "sqlcmd", "bcp", "osql", "isql", "zip", "7z ", "7za",
	"keytool", "jarsigner", "openssl", "ssh-keygen", "freerdp", "smbclient", "lftp", "curl", "wget", "htpasswd", "rclone"}

func isCmdByte(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// word is the extent of one shell word of a command line, quotes included.
type word struct{ s, e int }

// cliWords splits the command at text[i:] into words, to the end of the
// line or of the command (| ; & or a newline).
func cliWords(text string, i, end int, ws []word) []word {
	for i < end && len(ws) < cap(ws) {
		for i < end && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
		if i >= end || strings.IndexByte("|;&)`", text[i]) >= 0 {
			break
		}
		w := word{s: i}
		for i < end && text[i] != ' ' && text[i] != '\t' {
			if c := text[i]; c == '\'' || c == '"' {
				q := strings.IndexByte(text[i+1:end], c)
				if q < 0 {
					i = end
					break
				}
				i += q + 2
				continue
			}
			if strings.IndexByte("|;&)`", text[i]) >= 0 {
				break
			}
			i++
		}
		w.e = i
		ws = append(ws, w)
	}
	return ws
}

// unquoted narrows [a, b) to the inside of quotes around it.
func unquoted(text string, a, b int) (int, int) {
	if b-a >= 2 && (text[a] == '\'' || text[a] == '"') && text[b-1] == text[a] {
		return a + 1, b - 1
	}
	if b-a >= 1 && (text[a] == '\'' || text[a] == '"') {
		if q := strings.IndexByte(text[a+1:b], text[a]); q >= 0 {
			return a + 1, a + 1 + q
		}
	}
	return a, b
}

// cliAll finds password arguments of the command named at [ks, ke).
func cliAll(text string, ks, ke int) []found {
	// The keyword is part of the command's name: widen it to the word.
	if text[ke-1] == ' ' {
		ke--
	}
	for ks > 0 && isCmdByte(text[ks-1]) {
		ks--
	}
	for ke < len(text) && isCmdByte(text[ke]) {
		ke++
	}
	if ks > 0 && strings.IndexByte(" \t\n/'\"`;|&($", text[ks-1]) < 0 || ke >= len(text) || text[ke] != ' ' && text[ke] != '\t' {
		return nil
	}
	var name [16]byte
	if ke-ks > len(name) {
		return nil
	}
	n := copy(name[:], text[ks:ke])
	for i := range n {
		name[i] = foldByte(name[i])
	}
	spec, ok := cliSpecs[string(name[:n])]
	if !ok {
		return nil
	}
	end := lineEnd(text, ke, 4<<10)
	if spec.needs != "" && !strings.Contains(text[ke:end], spec.needs) {
		return nil
	}
	var buf [64]word
	ws := cliWords(text, ke, end, buf[:0])
	var out []found
	emit := func(a, b int, k flagKind) {
		a, b = unquoted(text, a, b)
		if k&flagCookie != 0 {
			if h, ok := strings.CutPrefix(text[a:b], "Cookie:"); ok {
				a = b - len(h)
			}
			if strings.IndexByte(text[a:b], '=') > 0 {
				out = append(out, cookiePairs(text, a, b)...)
			}
			return
		}
		if k&flagAfterSep != 0 {
			j := strings.IndexAny(text[a:b], ":%,")
			if j < 0 {
				return
			}
			a += j + 1
		}
		if k&flagPassPrefix != 0 {
			v, ok := strings.CutPrefix(text[a:b], "pass:")
			if !ok {
				return // env:VAR, file:PATH, stdin
			}
			a = b - len(v)
		}
		if b-a < 3 || placeholder(text[a:b]) {
			return
		}
		out = append(out, found{a, b, ""})
	}
	seen := spec.needs == ""
	var positional []word
	posMode := false
	for n := 0; n < len(ws); n++ {
		w := ws[n]
		tok := text[w.s:w.e]
		if !seen {
			seen = tok == spec.needs
			continue
		}
		if !strings.HasPrefix(tok, "-") && !strings.HasPrefix(tok, "/") {
			positional = append(positional, w)
			continue
		}
		if k, ok := spec.flags[tok]; ok {
			if k&flagPositional != 0 {
				posMode = true
				continue
			}
			if k&flagNext != 0 && n+1 < len(ws) {
				n++
				emit(ws[n].s, ws[n].e, k)
			}
			continue
		}
		if spec.flags["-b"]&flagPositional != 0 && len(tok) > 1 && tok[0] == '-' && tok[1] != '-' && strings.IndexByte(tok, 'b') > 0 {
			posMode = true // htpasswd -bc, -nb, -Bb …
			continue
		}
		for f, k := range spec.flags {
			switch {
			case k&flagEquals != 0 && strings.HasPrefix(tok, strings.TrimSuffix(f, "=")+"="):
				emit(w.s+len(strings.TrimSuffix(f, "="))+1, w.e, k)
			case k&flagAttached != 0 && len(tok) > len(f) && strings.HasPrefix(tok, f) &&
				(len(f) > 2 || tok[len(f)] != '='):
				emit(w.s+len(f), w.e, k)
			}
		}
	}
	if posMode && len(positional) >= 2 {
		last := positional[len(positional)-1]
		emit(last.s, last.e, 0)
	}
	return out
}

// ---- DSNs ----

// dsnAt finds the password of a DSN without a scheme, user:pass@tcp(host)
// (Go's MySQL driver) and the like; the keyword is the "@tcp(" part.
func dsnAt(text string, ks, ke int) []int {
	if ke >= len(text) || text[ke] != '(' && !strings.HasPrefix(text[ke:], "6(") {
		return nil
	}
	a := ks
	for a > 0 && ks-a < 512 && !isDSNStop(text[a-1]) {
		a--
	}
	colon := strings.IndexByte(text[a:ks], ':')
	if colon < 0 {
		return nil
	}
	v := a + colon + 1
	if v >= ks || placeholder(text[v:ks]) {
		return nil
	}
	return []int{a, ks, v, ks}
}

func isDSNStop(c byte) bool {
	return c <= ' ' || c == '"' || c == '\'' || c == '`' || c == '<' || c == '>' || c == '('
}

// oracleAt finds the password of Oracle's user/pass@host, after
// "jdbc:oracle:thin:" or the sqlplus command.
func oracleAt(text string, ks, ke int) []int {
	if text[ks] == ':' && !strings.HasSuffix(strings.ToLower(text[max(0, ks-11):ks]), "jdbc:oracle") {
		return nil
	}
	i := skipBlank(text, ke)
	a := i
	for i < len(text) && i-a < 256 && !isDSNStop(text[i]) && text[i] != '@' {
		i++
	}
	slash := strings.IndexByte(text[a:i], '/')
	if slash <= 0 || a+slash+1 >= i {
		return nil
	}
	v := a + slash + 1
	if placeholder(text[v:i]) || strings.HasPrefix(text[v:i], "/") {
		return nil
	}
	return []int{a, i, v, i}
}

// ---- keys ----

// puttyAt finds the private lines of a PuTTY key file (.ppk): the base64
// lines after "Private-Lines: N".
func puttyAt(text string, ks, ke int) []int {
	i := skipBlank(text, ke)
	n := 0
	for ; i < len(text) && '0' <= text[i] && text[i] <= '9' && n < 1000; i++ {
		n = n*10 + int(text[i]-'0')
	}
	if n == 0 {
		n = 1000 // cut short or mangled: take what looks like base64
	}
	for i < len(text) {
		if text[i] == '\r' || text[i] == '\n' || text[i] == ' ' {
			i++
		} else if strings.HasPrefix(text[i:], `\n`) || strings.HasPrefix(text[i:], `\r`) {
			i += 2
		} else {
			break
		}
	}
	v, e := i, i
	for line := 0; line < n && i < len(text); line++ {
		j := i
		for j < len(text) && (isBase64Byte(text[j]) || text[j] == '\\') && !strings.HasPrefix(text[j:], `\n`) {
			j++
		}
		if j == i {
			break
		}
		e = j
		if strings.HasPrefix(text[j:], `\n`) { // inside a JSON string
			j += 2
		}
		for j < len(text) && (text[j] == '\r' || text[j] == '\n') {
			j++
		}
		i = j
	}
	if e-v < 16 {
		return nil
	}
	return []int{ks, e, v, e}
}

func isBase64Byte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '='
}

// pemBase64At finds a base64-encoded PEM private key (kubeconfig's
// client-key-data, a Kubernetes secret's tls.key): the keyword begins
// the encoding of "-----BEGIN", and the decoded header must name a
// private key.
func pemBase64At(text string, ks, ke int) []int {
	if ks > 0 && isBase64Byte(text[ks-1]) || !strings.HasPrefix(text[ks:], "LS0tLS1CRUdJTi") {
		return nil // not the start of the encoding
	}
	e := ks
	for e < len(text) && (isBase64Byte(text[e]) || text[e] == '-' || text[e] == '_') {
		e++
	}
	head := text[ks:min(e, ks+96)]
	head = head[:len(head)/4*4]
	dec, err := base64.StdEncoding.DecodeString(head)
	if err != nil {
		dec, err = base64.URLEncoding.DecodeString(head)
	}
	if err != nil || !strings.Contains(string(dec), "PRIVATE KEY") {
		return nil
	}
	return []int{ks, e, ks, e}
}

// ---- Discord ----

// discordAt finds a Discord bot token (the bot id in base64, a
// timestamp, an HMAC: three dot-separated parts) within 120 bytes after
// "discord" or the word "bot", on the same line. A parser, because the
// regexp's lazy gap costs microseconds at every "bot" in clean text.
func discordAt(text string, ks, ke int) []int {
	if text[ks]|0x20 == 'b' && (ks > 0 && isTokenByte(text[ks-1]) || ke < len(text) && isTokenByte(text[ke])) {
		return nil // robot, bottom
	}
	end := lineEnd(text, ke, 120)
	for i := ke; i < end; i++ {
		if c := text[i]; c != 'M' && c != 'N' && c != 'O' || isTokenByte(text[i-1]) {
			continue
		}
		if e := discordTokenEnd(text, i); e > 0 {
			return []int{ks, e, i, e}
		}
	}
	return nil
}

// discordTokenEnd is the end of a Discord token starting at text[i], or 0.
func discordTokenEnd(text string, i int) int {
	for _, part := range [3][2]int{{23, 28}, {6, 6}, {27, 40}} {
		j := i
		for j < len(text) && j-i <= part[1] && isTokenByte(text[j]) {
			j++
		}
		if n := j - i; n < part[0] || n > part[1] {
			return 0
		}
		if part[0] == 27 {
			return j
		}
		if j >= len(text) || text[j] != '.' {
			return 0
		}
		i = j + 1
	}
	return 0
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// ---- URLs ----

// urlTokenAt finds a token used as a URL's user name, with no password:
// a Sentry DSN (https://KEY@o1.ingest.sentry.io/2), a token in a clone URL.
func urlTokenAt(text string, ks, ke int) []int {
	i := ke
	for i < len(text) && i-ke < 200 && (isKeyByte(text[i]) || text[i] == '~' || text[i] == '%') {
		i++
	}
	if i >= len(text) || text[i] != '@' || i+1 >= len(text) || !isKeyByte(text[i+1]) {
		return nil
	}
	tok := text[ke:i]
	if len(tok) < 20 || entropy(tok) < 3.0 || !strings.ContainsAny(tok, "0123456789") ||
		strings.Trim(tok, "0123456789") == "" || placeholder(tok) {
		return nil
	}
	return []int{ke, i, ke, i}
}
