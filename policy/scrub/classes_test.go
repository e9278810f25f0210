package scrub

import (
	"encoding/base64"
	"strings"
	"testing"
)

// Regression tests for the classes of issue #14: each class with several
// spellings. Every secret here is made up.

type classCase struct{ in, want string }

func runClass(t *testing.T, cases []classCase) {
	t.Helper()
	s := newTestScrubber(t, nil)
	for _, tc := range cases {
		got := s.Scrub(tc.in)
		if got != tc.want {
			t.Errorf("Scrub(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if again := s.Scrub(got); again != got {
			t.Errorf("not idempotent: %q → %q", got, again)
		}
	}
}

// unchanged lists texts that must pass as they are.
func unchanged(in ...string) []classCase {
	out := make([]classCase, len(in))
	for i, s := range in {
		out[i] = classCase{s, s}
	}
	return out
}

const rnd = "Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8Ky2Tr5Ee1Qa9Ll3Mm7Nn0Bb6Vv2Cc8Xx4Zz1Gg5Hh9Jj"

func long(n int) string { return strings.Repeat(rnd, n/len(rnd)+1)[:n] }

func TestClassLongValues(t *testing.T) {
	var cases []classCase
	for _, n := range []int{257, 300, 1000, 5000} {
		v := long(n)
		for _, f := range []string{"password=%s", "token: %s", "secret=%s", "api_key=%s", "X-API-Key: %s",
			`{"client_secret": "%s"}`, "DB_PASS='%s'", "--password %s"} {
			cases = append(cases, classCase{
				strings.ReplaceAll(f, "%s", v) + " tail",
				strings.ReplaceAll(f, "%s", "[REDACTED:password]") + " tail"})
		}
	}
	runClass(t, cases)
}

func TestClassEmptyValues(t *testing.T) {
	runClass(t, append(unchanged(
		"https://h/login?password=&user=bob",
		"password=&user=bob&next=%2Fhome",
		"password= user=bob",
		"token=;user=bob",
		"secret=&redirect_uri=https%3A%2F%2Fexample.com%2Fcb",
		"api_key=\tuser_name=alice",
		"a=1&password=&remember_me=on",
	), []classCase{
		{"password=Xq7zP2mL9vK4&user=bob", "password=[REDACTED:password]&user=bob"},
		{"?user=bob&pass=Zx8Kq2Lm4N&lang=en", "?user=bob&pass=[REDACTED:password]&lang=en"},
		{"token=ab&cd&ef12345", "token=[REDACTED:password]"},
	}...))
}

func TestClassErrorNamesNotSecrets(t *testing.T) {
	runClass(t, unchanged(
		"InvalidToken: tok_12",
		"error: ExpiredToken: tok_9f3a",
		"ErrMissingAPIKey: key_42",
		"invalid_token: abc123",
		`{"MalformedPassword": "pw_0017"}`,
		"BadCredentials: req_77aa",
		"--- PASS: TestTokenBucket/refill (0.00s)",
		"PASS: tests/test_auth.py",
	))
}

func TestClassCookies(t *testing.T) {
	jar := ".example.com\tTRUE\t/\tTRUE\t0\tsessionid\tq9Xk2vLm7Tz0pRw3sNd8"
	runClass(t, append(unchanged(
		"Set-Cookie: theme=dark; Path=/",
		"Set-Cookie: sessionid=deleted; expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/",
		"Cookie: lang=en; tz=UTC",
		".example.com\tTRUE\t/\tFALSE\t0\tlang\ten-GB",
	), []classCase{
		{"Set-Cookie: sessionid=9f8e7d6c5b4a3f2e1d0c; Path=/; HttpOnly", "Set-Cookie: sessionid=[REDACTED:cookie]; Path=/; HttpOnly"},
		{"Cookie: theme=dark; JSESSIONID=A1B2C3D4E5F6A7B8C9D0; lang=en", "Cookie: theme=dark; JSESSIONID=[REDACTED:cookie]; lang=en"},
		{"set-cookie: __Secure-next-auth.session-token=Zq8vK2xL9mN4pR7t; Secure", "set-cookie: __Secure-next-auth.session-token=[REDACTED:cookie]; Secure"},
		{"curl -b 'connect.sid=s%3AQx8vL2mN9pR4tY7w.k1J2h3G4f5D6s7A8' https://h", "curl -b 'connect.sid=[REDACTED:cookie]' https://h"},
		{`curl --cookie "remember_user_token=W1sxMjM0XSwiJDJhJDEwJGFi" https://h`, `curl --cookie "remember_user_token=[REDACTED:cookie]" https://h`},
		{`document.cookie = "auth_token=Zx9Kq2Lm4Np6Rs0T; path=/"`, `document.cookie = "auth_token=[REDACTED:cookie]; path=/"`},
		{"> Cookie: _gh_sess=Lm4Np6Rs0Tv3Wy5A; logged_in=yes", "> Cookie: _gh_sess=[REDACTED:cookie]; logged_in=yes"},
		{jar, strings.TrimSuffix(jar, "q9Xk2vLm7Tz0pRw3sNd8") + "[REDACTED:cookie]"},
	}...))
}

func TestClassBotTokensInPaths(t *testing.T) {
	runClass(t, []classCase{
		{"https://api.telegram.org/bot1234567890:AAaBcDeFgHiJkLmNoPqRsTuVwXyZ0123456/sendMessage",
			"https://api.telegram.org/bot[REDACTED:telegram-bot-token]/sendMessage"},
		{"GET /bot987654321:AAHn4Kq2Lm9Xw7Zp3Rt5Vb1Nc8Jd6Fg0Sa2/getUpdates HTTP/1.1",
			"GET /bot[REDACTED:telegram-bot-token]/getUpdates HTTP/1.1"},
		{"https://api.telegram.org/file/bot123456789:BBq7Zr2Lm9Xw4Kp1Vb8Nc3Hd6Jf0Sg5Ta7Ue/photos/a.jpg",
			"https://api.telegram.org/file/bot[REDACTED:telegram-bot-token]/photos/a.jpg"},
		{"https://api.telegram.org/bot1234567890%3AAAaBcDeFgHiJkLmNoPqRsTuVwXyZ0123456/getMe",
			"https://api.telegram.org/bot[REDACTED:telegram-bot-token]/getMe"},
	})
}

func TestClassNetrc(t *testing.T) {
	runClass(t, append(unchanged(
		"Reset your password here",
		"the password field is required",
		"login with your password at the prompt",
	), []classCase{
		{"machine api.example.com login bob password Zq8vK2xL9mN4", "machine api.example.com login bob password [REDACTED:password]"},
		{"machine github.com\n  login ci-bot\n  password ghx9Lm2Qp7Rt4Vw\n", "machine github.com\n  login ci-bot\n  password [REDACTED:password]\n"},
		{"default login anonymous password Xy7!k2Lm9qP3", "default login anonymous password [REDACTED:password]"},
		{"machine h account a1 login u password \"Pq9 Lm2 Zx7\"", "machine h account a1 login u password \"[REDACTED:password]\""},
	}...))
}

func TestClassDiscord(t *testing.T) {
	const tok = "MTE0OTg3NjU0MzIxMDk4NzY1NA.GaBcDe.q7Zr2Lm9Xw4Kp1Vb8Nc3Hd6Jf0Sg5Ta7UeXyZ"
	runClass(t, []classCase{
		{"Authorization: Bot " + tok, "Authorization: Bot [REDACTED:discord-bot-token]"},
		{"DISCORD_BOT_TOKEN=" + tok, "DISCORD_BOT_TOKEN=[REDACTED:discord-bot-token]"},
		{"Authorization: Bot " + tok[:60], "Authorization: Bot [REDACTED:authorization]"},
		{`discord bot login: client.run("` + tok + `")`, `discord bot login: client.run("[REDACTED:discord-bot-token]")`},
		{"bot token " + tok + " loaded", "bot token [REDACTED:discord-bot-token] loaded"},
		{"https://discord.com/api/v10/webhooks/123456789012345678/aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567",
			"https://discord.com/api/v10/webhooks/123456789012345678/[REDACTED:discord-webhook]"},
		{"https://ptb.discordapp.com/api/webhooks/123456789012345678/Zq8vK2xL9mN4pR7tZq8vK2xL9mN4pR7tZq8vK2xL9mN4pR7tZq8vK2xL9mN4pR7t",
			"https://ptb.discordapp.com/api/webhooks/123456789012345678/[REDACTED:discord-webhook]"},
	})
}

func TestClassSlackRefresh(t *testing.T) {
	runClass(t, []classCase{
		{"refresh: xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5MDEyMy1hYmNkZWY", "refresh: [REDACTED:slack-token]"},
		{"xoxe-1-My0xLTEyMzQ1Njc4OTAtNjc4OTAxMjM0NTY3OC1hYmNkZWZnaGlqa2xt done", "[REDACTED:slack-token] done"},
		{"SLACK_REFRESH_TOKEN=xoxe.xoxb-1-Qm9Ub2tlbjEyMzQ1Njc4OTA5ODc2NTQzMjE", "SLACK_REFRESH_TOKEN=[REDACTED:slack-token]"},
		{"cookie d=xoxd-Zq8vK2xL9mN4pR7tZq8vK2xL9mN4", "cookie d=[REDACTED:slack-token]"},
		{"client xoxc-1234567890-Zq8vK2xL9mN4pR7t", "client [REDACTED:slack-token]"},
	})
}

func TestClassDSN(t *testing.T) {
	runClass(t, []classCase{
		{"root:S3cr3tPw9@tcp(127.0.0.1:3306)/app?parseTime=true", "root:[REDACTED:dsn-password]@tcp(127.0.0.1:3306)/app?parseTime=true"},
		{`dsn := "app_user:p@ss:w0rd!@tcp(db.internal)/orders"`, `dsn := "app_user:[REDACTED:dsn-password]@tcp(db.internal)/orders"`},
		{"user:Xq7zP2mL@unix(/var/run/mysqld.sock)/db", "user:[REDACTED:dsn-password]@unix(/var/run/mysqld.sock)/db"},
		{"DATABASE_DSN=svc:Lm4N=p6Rs0@tcp6([::1]:3306)/x", "DATABASE_DSN=svc:[REDACTED:dsn-password]@tcp6([::1]:3306)/x"},
		{"jdbc:oracle:thin:scott/Tiger123x@db.example.com:1521:ORCL", "jdbc:oracle:thin:scott/[REDACTED:dsn-password]@db.example.com:1521:ORCL"},
		{"$ sqlplus system/Manager99@//host:1521/XE", "$ sqlplus system/[REDACTED:dsn-password]@//host:1521/XE"},
	})
}

func TestClassCommandLinePasswords(t *testing.T) {
	runClass(t, append(unchanged(
		"docker run -p 8080:80 nginx",
		"mysql -p mydb",
		"ssh -p 2222 host",
		"openssl enc -aes256 -pass env:PASS -in f",
		"openssl pkcs12 -passin file:pw.txt -in a.p12",
		"docker build --secret id=npmrc,src=.npmrc .",
		"echo $PW | docker login --password-stdin -u bob",
		"zip -r out.zip dir",
	), []classCase{
		{"docker login -u bob -p Dk9mX2qL7vR4 registry.example.com", "docker login -u bob -p [REDACTED:cli-password] registry.example.com"},
		{"docker login --password Dk9mX2qL7vR4 -u bob", "docker login --password [REDACTED:cli-password] -u bob"},
		{"podman login --password=Dk9mX2qL7vR4 quay.io", "podman login --password=[REDACTED:cli-password] quay.io"},
		{"mysql -uroot -p'S3cr3t!pw' db", "mysql -uroot -p'[REDACTED:cli-password]' db"},
		{"mysqldump --password=Zx8Kq2Lm4Np6 shop", "mysqldump --password=[REDACTED:cli-password] shop"},
		{"sshpass -pTr1cky99 ssh host", "sshpass -p[REDACTED:cli-password] ssh host"},
		{`sshpass -p "Tr1cky!pw" scp a b:`, `sshpass -p "[REDACTED:cli-password]" scp a b:`},
		{"redis-cli -h r -a Rd5sX9kQ2mL7 ping", "redis-cli -h r -a [REDACTED:cli-password] ping"},
		{"mongosh --username admin --password Mg7Kq2Lm9Xw4 --authenticationDatabase admin", "mongosh --username admin --password [REDACTED:cli-password] --authenticationDatabase admin"},
		{"ldapsearch -x -D cn=admin -w Ld4pX9kQ2m -b dc=ex", "ldapsearch -x -D cn=admin -w [REDACTED:cli-password] -b dc=ex"},
		{"sqlcmd -S srv -U sa -P 'Sq1Server!x9'", "sqlcmd -S srv -U sa -P '[REDACTED:cli-password]'"},
		{"keytool -importkeystore -srcstorepass Ks7Pass99x -deststorepass Ks8Pass11y", "keytool -importkeystore -srcstorepass [REDACTED:cli-password] -deststorepass [REDACTED:cli-password]"},
		{"openssl pkcs12 -export -passout pass:Op3nSsl99x -out a.p12", "openssl pkcs12 -export -passout pass:[REDACTED:cli-password] -out a.p12"},
		{"htpasswd -bc /etc/nginx/.htpasswd admin Ht9pwd77x", "htpasswd -bc /etc/nginx/.htpasswd admin [REDACTED:cli-password]"},
		{"smbclient //srv/share -U alice%Smb9pass77", "smbclient //srv/share -U alice%[REDACTED:cli-password]"},
		{"xfreerdp /v:host /u:admin /p:Rdp9Pass77x", "xfreerdp /v:host /u:admin /p:[REDACTED:cli-password]"},
		{"zip -P Z1pPass99 out.zip file", "zip -P [REDACTED:cli-password] out.zip file"},
		{"7z a -pSev3nZip99 out.7z dir", "7z a -p[REDACTED:cli-password] out.7z dir"},
		{"kubectl get pods --token Kb8sT0k3nQ9xZ2", "kubectl get pods --token [REDACTED:password]"},
		{"wget --http-password Wg3tPass99 https://h/f", "wget --http-password [REDACTED:password] https://h/f"},
		{"gpg --batch --passphrase Gp9Phrase77 -d f.gpg", "gpg --batch --passphrase [REDACTED:password] -d f.gpg"},
	}...))
}

func TestClassPasswordHashes(t *testing.T) {
	runClass(t, append(unchanged(
		"echo $1$2",
		"awk '{print $1$3}' file",
		"cost: $5$ per unit",
	), []classCase{
		{"root:$6$rounds=5000$Ab12Cd34$Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8Ky2Tr5Ee1Qa9Ll3Mm7Nn0Bb6Vv2Cc8Xx4Zz1Gg5.:19000:0:99999:7:::",
			"root:[REDACTED:password-hash]:19000:0:99999:7:::"},
		{"alice:$y$j9T$Xq7zP2mL9vK4Wn8R$t5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8Ky2Tr5Ee1Qa9Ll3M:19500:0:99999:7:::",
			"alice:[REDACTED:password-hash]:19500:0:99999:7:::"},
		{"daemon:!$6$Ab12Cd34$Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8:19000::::::", "daemon:![REDACTED:password-hash]:19000::::::"},
		{"bob:$apr1$Xq7zP2mL$t5Yb1Hc3Jd6Fg0Sa2Ue7W.", "bob:[REDACTED:password-hash]"},
		{"carol:$2y$10$Xq7zP2mL9vK4Wn8Rt5Yb1eHc3Jd6Fg0Sa2Ue7Wi4Oo8Ky2Tr5Ee1Q", "carol:[REDACTED:password-hash]"},
		{"dave:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "dave:[REDACTED:password-hash]"},
		{"userPassword: {SSHA}Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa", "userPassword: [REDACTED:password-hash]"},
		{"eve:$1$Ab12Cd34$Xq7zP2mL9vK4Wn8Rt5Yb1.:18000:0:99999:7:::", "eve:[REDACTED:password-hash]:18000:0:99999:7:::"},
		{`hash = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0$Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8"`, `hash = "[REDACTED:password-hash]"`},
		{"pbkdf2_sha256$600000$Xq7zP2mL9vK4$Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8Ky2Tr5Ee1Qa9=", "[REDACTED:password-hash]"},
		{"pbkdf2:sha256:600000$Xq7zP2mL$9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e", "[REDACTED:password-hash]"},
	}...))
}

func TestClassPuttyKeys(t *testing.T) {
	ppk := "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20240101\nPublic-Lines: 2\n" +
		"AAAAC3NzaC1lZDI1NTE5AAAAIHq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4\nOo8K\n" +
		"Private-Lines: %s\n" + "%k" + "Private-MAC: 8f3a9c1e7b2d4f6a8c0e9b1d7f3a5c8e2b4d6f0a8c0e9b1d7f3a5c8e2b4d6f0a\n"
	one := "AAAAIFq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8Ky\n"
	two := "AAABAQCq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8Ky2Tr5Ee1Qa9Ll3Mm7Nn0Bb6Vv2Cc8Xx4Zz1Gg5Hh9Jj\nq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8Ky2Tr5Ee1Qa9Ll3Mm7Nn0Bb6Vv2Cc8Xx4Zz1Gg5Hh9Jj==\n"
	mk := func(n, body string) string {
		return strings.Replace(strings.Replace(ppk, "%s", n, 1), "%k", body, 1)
	}
	jsonPPK := strings.ReplaceAll(mk("2", two), "\n", `\n`)
	runClass(t, []classCase{
		{mk("1", one), mk("1", "[REDACTED:private-key]\n")},
		{mk("2", two), mk("2", "[REDACTED:private-key]\n")},
		{strings.Replace(mk("2", two), "File-3: ssh-ed25519", "File-2: ssh-rsa", 1), strings.Replace(mk("2", "[REDACTED:private-key]\n"), "File-3: ssh-ed25519", "File-2: ssh-rsa", 1)},
		{`{"key":"` + jsonPPK + `"}`, `{"key":"` + strings.ReplaceAll(mk("2", "[REDACTED:private-key]\n"), "\n", `\n`) + `"}`},
	})
}

func TestClassKubeconfigKeys(t *testing.T) {
	pem := func(kind string) string {
		return base64.StdEncoding.EncodeToString([]byte("-----BEGIN " + kind + "-----\nMIIEowIBAAKCAQEA2q7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8Ky2Tr5\n-----END " + kind + "-----\n"))
	}
	cert := pem("CERTIFICATE")
	runClass(t, append(unchanged(
		"    client-certificate-data: "+cert,
		"    certificate-authority-data: "+cert,
		"  tls.crt: "+cert,
	), []classCase{
		{"    client-key-data: " + pem("RSA PRIVATE KEY"), "    client-key-data: [REDACTED:private-key]"},
		{"  tls.key: " + pem("PRIVATE KEY") + "\n", "  tls.key: [REDACTED:private-key]\n"},
		{`{"client-key-data":"` + pem("EC PRIVATE KEY") + `"}`, `{"client-key-data":"[REDACTED:private-key]"}`},
		{"ssh-privatekey: " + pem("OPENSSH PRIVATE KEY"), "ssh-privatekey: [REDACTED:private-key]"},
		{"client-key-data: " + base64.StdEncoding.EncodeToString([]byte(rnd)), "client-key-data: [REDACTED:private-key]"},
	}...))
}

func TestClassStripeWebhookSecrets(t *testing.T) {
	const w = "whsec_Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa"
	runClass(t, []classCase{
		{w, "[REDACTED:stripe-webhook-secret]"},
		{"STRIPE_WEBHOOK_SECRET=" + w, "STRIPE_WEBHOOK_SECRET=[REDACTED:stripe-webhook-secret]"},
		{`{"endpoint_secret":"` + w + `"}`, `{"endpoint_secret":"[REDACTED:stripe-webhook-secret]"}`},
		{"Ready! Your webhook signing secret is " + w + " (^C to quit)", "Ready! Your webhook signing secret is [REDACTED:stripe-webhook-secret] (^C to quit)"},
	})
}

func TestClassSentryDSN(t *testing.T) {
	const k = "9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c"
	runClass(t, append(unchanged(
		"https://user@example.com/path",
		"https://git@github.com/acme/repo",
	), []classCase{
		{"https://" + k + "@o123456.ingest.sentry.io/4504", "https://[REDACTED:url-token]@o123456.ingest.sentry.io/4504"},
		{"SENTRY_DSN=https://" + k + "@sentry.example.com/12", "SENTRY_DSN=https://[REDACTED:url-token]@sentry.example.com/12"},
		{`sentry_dsn: "https://` + k + `@o1.ingest.us.sentry.io/2"`, `sentry_dsn: "https://[REDACTED:url-token]@o1.ingest.us.sentry.io/2"`},
		{"https://" + k + ":1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d@sentry.io/1", "https://" + k + ":[REDACTED:url-password]@sentry.io/1"},
	}...))
}

func TestClassXMLPasswords(t *testing.T) {
	runClass(t, append(unchanged(
		"<password/>",
		"<password></password>",
		"<passwordPolicy>strict-mode-on</passwordPolicy>",
		"<token>${TOKEN}</token>",
	), []classCase{
		{"<password>Xq7zP2mL9vK4</password>", "<password>[REDACTED:password]</password>"},
		{"<Password>Zq8 vK2 xL9mN4</Password>", "<Password>[REDACTED:password]</Password>"},
		{"<db:password>Xq7zP2mL9vK4</db:password>", "<db:password>[REDACTED:password]</db:password>"},
		{"<client_secret><![CDATA[Xq7z&P2mL<9vK4]]></client_secret>", "<client_secret><![CDATA[[REDACTED:password]]]></client_secret>"},
		{`<apiKey type="string">Ak9Xq7zP2mL</apiKey>`, `<apiKey type="string">[REDACTED:password]</apiKey>`},
		{"<server><id>nexus</id><username>deploy</username><password>{Xq7zP2mL9vK4=}</password></server>",
			"<server><id>nexus</id><username>deploy</username><password>[REDACTED:password]</password></server>"},
		{"<passwd>\n  Xq7zP2mL9vK4\n</passwd>", "<passwd>\n  [REDACTED:password]\n</passwd>"},
	}...))
}

func TestClassPass(t *testing.T) {
	runClass(t, append(unchanged(
		"bypass=false",
		"pass: 3",
		"passed=12 failed=0",
		"compass: north-east",
	), []classCase{
		{"pass=Hunter22xyz", "pass=[REDACTED:password]"},
		{"db_pass: Zx8Kq2Lm4N", "db_pass: [REDACTED:password]"},
		{`PASS="Zx8Kq2Lm4N"`, `PASS="[REDACTED:password]"`},
		{"smtp_pass=Sm7pPass99x", "smtp_pass=[REDACTED:password]"},
		{"mysql_pass='Xq7zP2mL9vK4'", "mysql_pass='[REDACTED:password]'"},
		{`{"userPass":"Xq7zP2mL9vK4"}`, `{"userPass":"[REDACTED:password]"}`},
	}...))
}

func TestClassProviderTokens(t *testing.T) {
	runClass(t, []classCase{
		{"GROQ_KEY gsk_Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8Ky2Tr5Ee1Qa9L", "GROQ_KEY [REDACTED:groq-api-key]"},
		{"client = Groq(api_key='gsk_Zq8vK2xL9mN4pR7tZq8vK2xL9mN4pR7tZq8vK2xL9mN4pR7tAb')", "client = Groq(api_key='[REDACTED:groq-api-key]')"},
		{"replicate r8_Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7W ok", "replicate [REDACTED:replicate-api-token] ok"},
		{"notion secret_Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8K", "notion [REDACTED:notion-token]"},
		{"ntn_12345678901Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue", "[REDACTED:notion-token]"},
		{"figma figd_Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7-Wi4_Oo8", "figma [REDACTED:figma-token]"},
		{"dp.st.prd.Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8K", "[REDACTED:doppler-token]"},
		{"DOPPLER dp.pt.Zq8vK2xL9mN4pR7tZq8vK2xL9mN4pR7tZq8vK2xL9mN", "DOPPLER [REDACTED:doppler-token]"},
		{"dp.sa.Xq7zP2mL9vK4Wn8Rt5Yb1Hc3Jd6Fg0Sa2Ue7Wi4Oo8K", "[REDACTED:doppler-token]"},
		{"op: ops_eyJ" + long(260), "op: [REDACTED:1password-service-account-token]"},
		{"secret key A3-Q7ZR2L-M9XW4KP1VB8-NC3HD-6JF0S-G5TA7", "secret key [REDACTED:1password-secret-key]"},
		{"A3-Q7ZR2L-M9XW4K-P1VB8-NC3HD-6JF0S-G5TA7", "[REDACTED:1password-secret-key]"},
		{"bt access_token$production$q7zr2lm9xw4kp1vb$9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c", "bt [REDACTED:braintree-token]"},
		{"tokenization key sandbox_q7zr2lm9_x4kp1vb8nc3hd6jf", "tokenization key [REDACTED:braintree-tokenization-key]"},
	})
}

// Neighbours of the classes above: the same secret in the other shapes it
// takes.
func TestClassNeighbours(t *testing.T) {
	runClass(t, append(unchanged(
		"- name: LOG_LEVEL\n  value: debug-verbose",
		"- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}",
		"session: 3",
		".git/hooks/pre-commit-sample-hook-file",
	), []classCase{
		{"- name: DB_PASSWORD\n  value: Xq7zP2mL9vK4\n", "- name: DB_PASSWORD\n  value: [REDACTED:password]\n"},
		{`<add key="Password" value="Xq7zP2mL9vK4"/>`, `<add key="Password" value="[REDACTED:password]"/>`},
		{`{"name": "api_token", "value": "Zq8vK2xL9mN4pR7t"}`, `{"name": "api_token", "value": "[REDACTED:password]"}`},
		{"session_id=9f8e7d6c5b4a3f2e1d0c", "session_id=[REDACTED:password]"},
		{`{"sessionId":"Zq8vK2xL9mN4pR7t"}`, `{"sessionId":"[REDACTED:password]"}`},
		{"https://outlook.webhook.office.com/webhookb2/a1b2/IncomingWebhook/9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c/c3d4", "https://outlook.webhook.office.com/webhookb2/a1b2/IncomingWebhook/[REDACTED:teams-webhook]/c3d4"},
		{"https://open.feishu.cn/open-apis/bot/v2/hook/5f0c2a9e-8c1b-4e7d-9a36-2b6f1d0e4c73", "https://open.feishu.cn/open-apis/bot/v2/hook/[REDACTED:feishu-webhook]"},
		{"https://chat.example.com/hooks/xq7zp2ml9vk4wn8rt5yb1hc3jd", "https://chat.example.com/hooks/[REDACTED:chat-webhook]"},
		{"postgres://app:" + long(400) + "@db/x", "postgres://app:[REDACTED:url-password]@db/x"},
	}...))
}
