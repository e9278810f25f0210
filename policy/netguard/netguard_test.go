package netguard

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/idna"
)

// testGuardConfig is the allowlist the URL tables run against.
var testGuardConfig = Config{
	AllowedDomains: []string{
		"allowed.com",
		"*.wild.example.org",
		"api.example.net",
		"Bücher.de",
		"93.184.216.34",
		"[2606:4700::1111]",
		"127.0.0.1",       // allowlisted but loopback: still refused
		"::1",             // likewise
		"169.254.169.254", // allowlisted but metadata: always refused
		"10.0.0.5",        // private, and in AllowPrivateHosts
		"localhost",
		"apple.com",
	},
	AllowPrivateHosts: []string{"10.0.0.5", "localhost"},
}

func newTestGuard(t testing.TB) *Guard {
	t.Helper()
	g, err := New(testGuardConfig)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestNewNetGuardValidatesPatterns(t *testing.T) {
	good := []struct{ in, host string }{
		{"example.com", "example.com"},
		{"  Example.COM.  ", "example.com"},
		{"*.example.com", ".example.com"},
		{"*.EXAMPLE.com.", ".example.com"},
		{"bücher.de", "xn--bcher-kva.de"},
		{"*.bücher.de", ".xn--bcher-kva.de"},
		{"93.184.216.34", "93.184.216.34"},
		{"2606:4700:0:0::1111", "2606:4700::1111"},
		{"[2606:4700::1111]", "2606:4700::1111"},
		{"*.api.test", ".api.test"},
		{"localhost", "localhost"},
		{"a_b.example.com", "a_b.example.com"},
	}
	for _, tc := range good {
		g, err := New(Config{AllowedDomains: []string{tc.in}})
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		_, exact := g.exact[tc.host]
		wild := len(g.wildcards) == 1 && g.wildcards[0].suffix == tc.host
		if !exact && !wild {
			t.Errorf("%q: normalised to exact=%v wild=%v, want %q", tc.in, g.exact, g.wildcards, tc.host)
		}
	}
	bad := []string{
		"", "   ", "*:443", "*.", "**.example.com", "a.*.example.com", "*example.com", "example.*",
		"*.com", "*.co.uk", "*.github.io", "*.test", "*.localhost",
		"example.com:0", "example.com:65536", "example.com:x", "*.example.com:", "http://example.com", "https://example.com/", "example.com/path",
		"user@example.com", "example.com?x", "example.com#x", `example.com\x`, "ex%61mple.com",
		"exa mple.com", "example..com", ".example.com", "*.1.2.3.4", "*.93.184.216.34",
		"2130706433", "0x7f.1", "127.1", "017700000001", "[1.2.3.4]", "[fe80::1%eth0]", "fe80::1%eth0",
		"[::1]:0", "ex!ample.com", strings.Repeat("a", 64) + ".com",
	}
	for _, p := range bad {
		if _, err := New(Config{AllowedDomains: []string{p}}); err == nil {
			t.Errorf("pattern %q accepted, want refused", p)
		}
	}
	if _, err := New(Config{}); err == nil {
		t.Error("empty allowlist accepted")
	}
	if _, err := New(Config{AllowedDomains: []string{"a.com"}, AllowPrivateHosts: []string{"*.a.com"}}); err == nil {
		t.Error("wildcard in AllowPrivateHosts accepted")
	}
}

func TestCheckURL(t *testing.T) {
	g := newTestGuard(t)
	long := "http://allowed.com/" + strings.Repeat("a", maxURLBytes)
	tests := []struct {
		url string
		ok  bool
	}{
		// Allowed.
		{"http://allowed.com/", true},
		{"https://allowed.com/path?q=1#frag", true},
		{"http://allowed.com", true},
		{"http://ALLOWED.com.", true},
		{"HTTP://Allowed.Com/", true},
		{"http://allowed.com:8080/", true},
		{"https://allowed.com:443", true},
		{"http://allowed.com:/", true},
		{"http://allowed.com:080/", true},
		{"http://a.wild.example.org/", true},
		{"http://a.b.c.wild.example.org/x", true},
		{"http://A.WILD.EXAMPLE.ORG./", true},
		{"http://a_b.wild.example.org/", true},
		{"http://bücher.de/", true},
		{"http://BÜCHER.de/", true},
		{"http://xn--bcher-kva.de/", true},
		{"http://93.184.216.34/", true},
		{"http://93.184.216.34:8443/", true},
		{"http://[2606:4700::1111]/", true},
		{"http://[2606:4700:0:0:0:0:0:1111]:8443/", true},
		{"http://api.example.net/x", true},
		{"http://allowed.com/..%2f..%2fetc/passwd", true},
		{"http://allowed.com/@evil.com", true},
		{"http://allowed.com?@evil.com", true},
		{"http://allowed.com/#@evil.com", true},
		{"http://allowed.com/" + "\\", false}, // backslash refused anywhere before the query
		{"http://localhost/", true},           // allowlisted name: its addresses are checked at dial time
		{"http://localhost./", true},
		{"http://LOCALHOST:3000/", true},
		{"http://10.0.0.5/", true},    // private literal, in AllowPrivateHosts
		{"http://ａｌｌｏｗｅｄ．ｃｏｍ/", true}, // full-width: IDNA maps it to allowed.com, which is what net/http dials
		{"http://allowed。com/", true}, // ideographic full stop maps to '.'
		{"http://ⓐllowed.com/", true}, // circled a maps to 'a'

		// Userinfo and parser-confusion tricks.
		{"http://allowed.com@evil.com/", false},
		{"http://allowed.com:80@evil.com/", false},
		{"http://allowed.com:pass@evil.com/", false},
		{"http://user:pass@allowed.com/", false},
		{"http://user@allowed.com/", false},
		{"http://@allowed.com/", false},
		{`http://evil.com\@allowed.com/`, false},
		{`http://evil.com\allowed.com`, false},
		{`http://allowed.com\.evil.com/`, false},
		{`https://allowed.com\evil.com/`, false},
		{"http://evil.com#@allowed.com", false},
		{"http://evil.com?@allowed.com", false},
		{"http://evil.com/allowed.com", false},
		{"http://evil.com:80#@allowed.com:80/", false},
		{"http://allowed.com%5C@evil.com/", false},

		// Host matching.
		{"http://allowed.com.evil.com/", false},
		{"http://notallowed.com/", false},
		{"http://allowed.co/", false},
		{"http://allowedxcom/", false},
		{"http://www.allowed.com/", false},
		{"http://wild.example.org/", false}, // a wildcard does not match its apex
		{"http://xwild.example.org/", false},
		{"http://wild.example.org.evil.com/", false},
		{"http://a.wild.example.org.evil.com/", false},
		{"http://*.wild.example.org/", false},
		{"http://a!b.wild.example.org/", false},
		{"http://xn--bcher-kva.de.evil.com/", false},
		{"http://bücher.de.evil.com/", false},
		{"http://allowed.com../", false},
		{"http://.allowed.com/", false},
		{"http://" + strings.Repeat("a", 64) + ".wild.example.org/", false},
		{"http://" + strings.Repeat("a.", 130) + "wild.example.org/", false},

		// IDNA homographs.
		{"http://аllowed.com/", false}, // Cyrillic а
		{"http://allowed.cοm/", false}, // Greek omicron
		{"http://аpple.com/", false},   // Cyrillic а
		{"http://xn--pple-43d.com/", false},
		{"http://allowed.com\u2024evil.com/", false}, // one-dot leader

		// IP literals and their spellings.
		{"http://127.0.0.1/", false}, // allowlisted, but loopback and not a private host
		{"http://[::1]/", false},
		{"http://169.254.169.254/latest/meta-data/", false}, // allowlisted, but metadata
		{"http://[::ffff:127.0.0.1]/", false},
		{"http://[::ffff:7f00:1]/", false},
		{"http://[::ffff:93.184.216.34]/", false}, // not the literal on the list
		{"http://[64:ff9b::7f00:1]/", false},
		{"http://[0:0:0:0:0:ffff:169.254.169.254]/", false},
		{"http://2130706433/", false},
		{"http://0x7f.1/", false},
		{"http://0x7f000001/", false},
		{"http://017700000001/", false},
		{"http://0177.0.0.1/", false},
		{"http://127.1/", false},
		{"http://127.0.1/", false},
		{"http://0/", false},
		{"http://0x/", false},
		{"http://0.0.0.0/", false},
		{"http://[::]/", false},
		{"http://1.2.3.4.5/", false},
		{"http://93.184.216.034/", false},
		{"http://0x5db8d822/", false},    // 93.184.216.34 in hex
		{"http://1572395042/", false},    // 93.184.216.34 as one number
		{"http://93.184.216.34./", true}, // same literal with the root dot
		{"http://[93.184.216.34]/", false},
		{"http://[fe80::1%25eth0]/", false},
		{"http://evil.123/", false},

		// Ports.
		{"http://allowed.com:0/", false},
		{"http://allowed.com:65536/", false},
		{"http://allowed.com:99999999999/", false},
		{"http://allowed.com:-1/", false},
		{"http://allowed.com:80:80/", false},
		{"http://allowed.com:8o/", false},

		// Schemes and shapes.
		{"file:///etc/passwd", false},
		{"file://allowed.com/etc/passwd", false},
		{"gopher://allowed.com:70/_GET", false},
		{"ftp://allowed.com/", false},
		{"ws://allowed.com/", false},
		{"dict://allowed.com:11211/stat", false},
		{"javascript:alert(1)", false},
		{"data:text/plain,hi", false},
		{"//allowed.com/", false},
		{"/path", false},
		{"allowed.com", false},
		{"allowed.com/path", false},
		{"http:allowed.com", false},
		{"http:/allowed.com", false},
		{"http:///allowed.com", false},
		{"http://", false},
		{"", false},
		{"http://%61llowed.com/", false},
		{"http://b%C3%BCcher.de/", false},
		{"http://allowed.com%2f.evil.com/", false},
		{"http://allowed.com%00.evil.com/", false},
		{"http://allowed.com\t/", false},
		{"http://allowed.com\r\nHost: evil.com/", false},
		{"http://allowed.com /", false},
		{" http://allowed.com/", false},
		{long, false},
	}
	if len(tests) < 80 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tc := range tests {
		u, err := g.CheckURL(tc.url)
		if tc.ok {
			if err != nil {
				t.Errorf("CheckURL(%q) = %v, want allowed", tc.url, err)
				continue
			}
			want, perr := url.Parse(tc.url)
			if perr != nil || u.String() != want.String() {
				t.Errorf("CheckURL(%q) returned %v, want url.Parse's %v", tc.url, u, want)
			}
			continue
		}
		if err == nil {
			t.Errorf("CheckURL(%q) allowed, want refused", tc.url)
			continue
		}
		var nd *DeniedError
		if !errors.As(err, &nd) || nd.Reason == "" {
			t.Errorf("CheckURL(%q) error %T %v, want *DeniedError with a reason", tc.url, err, err)
		}
		if u != nil {
			t.Errorf("CheckURL(%q) returned a URL with its error", tc.url)
		}
		if !strings.HasPrefix(err.Error(), "network guard refused ") {
			t.Errorf("CheckURL(%q) error %q has the wrong shape", tc.url, err)
		}
	}
}

func TestNetDeniedErrorRedacts(t *testing.T) {
	g := newTestGuard(t)
	_, err := g.CheckURL("http://admin:s3cret-token@evil.com/x?api_key=s3cret-key#frag")
	if err == nil {
		t.Fatal("allowed")
	}
	msg := err.Error()
	for _, secret := range []string{"admin", "s3cret", "frag"} {
		if strings.Contains(msg, secret) {
			t.Errorf("error %q shows %q", msg, secret)
		}
	}
	if !strings.Contains(msg, "evil.com") {
		t.Errorf("error %q does not name the host", msg)
	}
	_, err = g.CheckURL("http://evil.com/\x00\x01")
	if err == nil || strings.ContainsAny(err.Error(), "\x00\x01") {
		t.Errorf("control characters shown raw: %q", err)
	}
	// Unparseable URLs are redacted too.
	_, err = g.CheckURL("http://admin:s3cret token@evil.com:80:80/x?api_key=s3cret#frag")
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "admin") {
		t.Errorf("unparseable URL shown unredacted: %v", err)
	}
	e := &DeniedError{URL: "http://x/", Reason: "why"}
	if got, want := e.Error(), "network guard refused http://x/: why"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestCheckIP(t *testing.T) {
	g, err := New(Config{
		AllowedDomains:    []string{"dev.local.test", "public.test", "::1"},
		AllowPrivateHosts: []string{"dev.local.test", "[::1]"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ip   string
		host string // "" means public.test, not a private host
		ok   bool
	}{
		// Public.
		{"8.8.8.8", "", true},
		{"1.1.1.1", "", true},
		{"93.184.216.34", "", true},
		{"11.0.0.1", "", true},
		{"100.63.255.255", "", true},
		{"100.128.0.0", "", true},
		{"172.15.255.255", "", true},
		{"172.32.0.0", "", true},
		{"192.167.255.255", "", true},
		{"192.169.0.0", "", true},
		{"198.17.255.255", "", true},
		{"198.20.0.0", "", true},
		{"223.255.255.255", "", true},
		{"2606:4700::1111", "", true},
		{"2001:4860:4860::8888", "", true},
		{"::ffff:8.8.8.8", "", true},
		{"64:ff9b::808:808", "", true},          // NAT64 of 8.8.8.8
		{"2002:808:808::1", "", true},           // 6to4 of 8.8.8.8
		{"::8.8.8.8", "", true},                 // IPv4-compatible 8.8.8.8
		{"2001:0:808:808::f7f7:f7f7", "", true}, // Teredo: server 8.8.8.8, client 8.8.8.8

		// Private: refused unless the host is a private host.
		{"127.0.0.1", "", false},
		{"127.255.255.254", "", false},
		{"10.0.0.1", "", false},
		{"10.255.255.255", "", false},
		{"172.16.0.1", "", false},
		{"172.31.255.255", "", false},
		{"192.168.1.1", "", false},
		{"100.64.0.1", "", false},
		{"100.127.255.255", "", false},
		{"198.18.0.1", "", false},
		{"198.19.255.255", "", false},
		{"::1", "", false},
		{"fc00::1", "", false},
		{"fd12:3456:789a::1", "", false},
		{"fec0::1", "", false},
		{"::ffff:127.0.0.1", "", false},
		{"::ffff:10.1.2.3", "", false},

		// Always refused.
		{"169.254.169.254", "", false},
		{"169.254.170.2", "", false},
		{"169.254.1.1", "", false},
		{"100.100.100.200", "", false},
		{"168.63.129.16", "", false},
		{"0.0.0.0", "", false},
		{"0.1.2.3", "", false},
		{"255.255.255.255", "", false},
		{"240.0.0.1", "", false},
		{"224.0.0.1", "", false},
		{"239.255.255.250", "", false},
		{"192.0.2.1", "", false},
		{"198.51.100.1", "", false},
		{"203.0.113.1", "", false},
		{"192.0.0.8", "", false},
		{"192.88.99.1", "", false},
		{"::", "", false},
		{"fe80::1", "", false},
		{"fe80::1%eth0", "", false},
		{"ff02::1", "", false},
		{"fd00:ec2::254", "", false},
		{"fd00:ec2::23", "", false},
		{"fd20:ce::254", "", false},
		{"::ffff:169.254.169.254", "", false},
		{"::ffff:a9fe:a9fe", "", false},
		{"::127.0.0.1", "", false},
		{"::169.254.169.254", "", false},
		{"::0.0.0.1", "", false},
		{"64:ff9b::7f00:1", "", false},
		{"64:ff9b::a9fe:a9fe", "", false},
		{"64:ff9b::a00:1", "", false},
		{"64:ff9b:1::a00:1", "", false},
		{"2002:7f00:1::", "", false},
		{"2002:a9fe:a9fe::1", "", false},
		{"2002:c0a8:101::1", "", false},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "", false}, // Teredo client 127.0.0.1
		{"2001:0:a9fe:a9fe::", "", false},                   // Teredo server 169.254.169.254
		{"2001:db8::1", "", false},
		{"3fff::1", "", false},
		{"100::1", "", false},
		{"::ffff:0:7f00:1", "", false},
		{"4000::1", "", false},
		{"5f00::1", "", false},
		{"2001:2::1", "", false},

		// A private host opens private ranges, and nothing else.
		{"127.0.0.1", "dev.local.test", true},
		{"10.0.0.1", "dev.local.test", true},
		{"192.168.1.1", "DEV.local.test.", true},
		{"100.64.0.1", "dev.local.test", true},
		{"198.18.0.1", "dev.local.test", true},
		{"fd12::1", "dev.local.test", true},
		{"::1", "dev.local.test", true},
		{"::ffff:127.0.0.1", "dev.local.test", true},
		{"::1", "[::1]", true},
		{"::1", "::1", true},
		{"8.8.8.8", "dev.local.test", true},
		{"169.254.169.254", "dev.local.test", false},
		{"169.254.170.2", "dev.local.test", false},
		{"100.100.100.200", "dev.local.test", false},
		{"168.63.129.16", "dev.local.test", false},
		{"fd00:ec2::254", "dev.local.test", false},
		{"fd00:ec2::1", "dev.local.test", false},
		{"fd20:ce::254", "dev.local.test", false},
		{"::ffff:169.254.169.254", "dev.local.test", false},
		{"0.0.0.0", "dev.local.test", false},
		{"::", "dev.local.test", false},
		{"fe80::1", "dev.local.test", false},
		{"224.0.0.1", "dev.local.test", false},
		{"64:ff9b::7f00:1", "dev.local.test", false},
		{"2002:7f00:1::", "dev.local.test", false},
		{"::127.0.0.1", "dev.local.test", false},
		{"127.0.0.1", "dev.local.test.evil.com", false},
		{"127.0.0.1", "sub.dev.local.test", false},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tc := range tests {
		host := tc.host
		if host == "" {
			host = "public.test"
		}
		ip := netip.MustParseAddr(tc.ip)
		err := g.CheckIP(host, ip)
		if tc.ok != (err == nil) {
			t.Errorf("CheckIP(%q, %s) = %v, want ok=%v", host, ip, err, tc.ok)
		}
		var nd *DeniedError
		if err != nil && (!errors.As(err, &nd) || nd.Reason == "") {
			t.Errorf("CheckIP(%q, %s) error %T, want *DeniedError with a reason", host, ip, err)
		}
	}
	if err := g.CheckIP("public.test", netip.Addr{}); err == nil {
		t.Error("the zero Addr was allowed")
	}
}

// FuzzCheckURL: CheckURL never panics, and whatever it allows parses with
// url.Parse to a host that, normalised independently, is on the allowlist
// and is not an address the guard refuses.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"http://allowed.com/", "http://allowed.com@evil.com", `http://evil.com\@allowed.com`,
		"http://allowed.com.evil.com", "http://evil.com#@allowed.com", "http://ALLOWED.com.",
		"http://аllowed.com", "http://[::ffff:127.0.0.1]", "http://2130706433", "http://0x7f.1",
		"http://017700000001", "http://127.1", "file:///etc/passwd", "//allowed.com",
		"http://wild.example.org", "http://a.wild.example.org:8080/x?y#z", "http://93.184.216.34/",
		"http://[2606:4700::1111]/", "http://bücher.de/", "http://ａｌｌｏｗｅｄ．ｃｏｍ/",
		"http://localhost/", "http://10.0.0.5/", "http://169.254.169.254/",
	} {
		f.Add(s)
	}
	g := newTestGuard(f)
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := g.CheckURL(raw)
		if err != nil {
			return
		}
		p, perr := url.Parse(raw)
		if perr != nil {
			t.Fatalf("allowed %q, which url.Parse refuses: %v", raw, perr)
		}
		if p.String() != u.String() {
			t.Fatalf("allowed %q as %q, url.Parse gives %q", raw, u, p)
		}
		if p.Scheme != "http" && p.Scheme != "https" || p.User != nil {
			t.Fatalf("allowed %q with scheme %q user %v", raw, p.Scheme, p.User)
		}
		host := fuzzNormalize(t, p.Hostname())
		if !fuzzAllowed(host) {
			t.Fatalf("allowed %q whose host %q is not on the allowlist", raw, host)
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			if c, _ := classifyIP(ip); c == ipForbidden || c == ipPrivate && host != "10.0.0.5" {
				t.Fatalf("allowed %q with refused address %s", raw, ip)
			}
		}
	})
}

// fuzzNormalize normalises a host the simple way, independently of
// normalizeHost.
func fuzzNormalize(t *testing.T, h string) string {
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.String()
	}
	a := h
	if !isASCII(h) {
		var err error
		if a, err = idna.Lookup.ToASCII(h); err != nil {
			t.Fatalf("allowed host %q that IDNA refuses: %v", h, err)
		}
	}
	a = strings.TrimSuffix(strings.ToLower(a), ".")
	if ip, err := netip.ParseAddr(a); err == nil {
		return ip.String()
	}
	return a
}

func fuzzAllowed(host string) bool {
	switch host {
	case "allowed.com", "api.example.net", "xn--bcher-kva.de", "93.184.216.34", "2606:4700::1111",
		"127.0.0.1", "::1", "169.254.169.254", "10.0.0.5", "localhost", "apple.com":
		return true
	}
	return strings.HasSuffix(host, ".wild.example.org") && !strings.HasPrefix(host, ".")
}

func BenchmarkCheckURL(b *testing.B) {
	g := newTestGuard(b)
	urls := []string{
		"https://a.wild.example.org/v1/items?limit=10&cursor=abc",
		"https://api.example.net/forecast/Tokyo?days=3&units=metric",
		"http://allowed.com@evil.com/",
		"https://bücher.de/suche?q=go",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, _ = g.CheckURL(urls[i%len(urls)])
	}
}
