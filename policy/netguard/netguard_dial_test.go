package netguard

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	"golang.org/x/net/http/httpproxy"
)

// testDNS is a tiny authoritative DNS server on 127.0.0.1 (UDP) for the
// dial tests. answer gets the lowercased name without the root dot, the
// query type and how many queries of that name and type it has seen,
// counting this one; ok=false answers NXDOMAIN.
type testDNS struct {
	pc     net.PacketConn
	answer func(name string, qtype dnsmessage.Type, n int) (addrs []netip.Addr, ok bool)

	mu      sync.Mutex
	queries map[string]int
}

func startTestDNS(t *testing.T, answer func(name string, qtype dnsmessage.Type, n int) ([]netip.Addr, bool)) *testDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &testDNS{pc: pc, answer: answer, queries: map[string]int{}}
	go d.serve()
	t.Cleanup(func() { pc.Close() })
	return d
}

// staticDNS answers from a fixed name → addresses table.
func staticDNS(t *testing.T, table map[string][]string) *testDNS {
	return startTestDNS(t, func(name string, _ dnsmessage.Type, _ int) ([]netip.Addr, bool) {
		ss, ok := table[name]
		var addrs []netip.Addr
		for _, s := range ss {
			addrs = append(addrs, netip.MustParseAddr(s))
		}
		return addrs, ok
	})
}

// resolver returns a pure-Go resolver that asks only this server.
func (d *testDNS) resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var nd net.Dialer
			return nd.DialContext(ctx, "udp", d.pc.LocalAddr().String())
		},
	}
}

// count returns how many queries of name and type the server has seen.
func (d *testDNS) count(name string, qtype dnsmessage.Type) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries[name+"/"+qtype.String()]
}

func (d *testDNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := d.handle(buf[:n]); resp != nil {
			_, _ = d.pc.WriteTo(resp, from)
		}
	}
}

func (d *testDNS) handle(msg []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	name := strings.TrimSuffix(strings.ToLower(q.Name.String()), ".")
	d.mu.Lock()
	key := name + "/" + q.Type.String()
	d.queries[key]++
	n := d.queries[key]
	d.mu.Unlock()

	addrs, ok := d.answer(name, q.Type, n)
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	if !ok {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	for _, a := range addrs {
		res := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}
		switch {
		case q.Type == dnsmessage.TypeA && a.Is4():
			_ = b.AResource(res, dnsmessage.AResource{A: a.As4()})
		case q.Type == dnsmessage.TypeAAAA && a.Is6():
			_ = b.AAAAResource(res, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}

// countingServer is an httptest server on 127.0.0.1 that counts requests.
type countingServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newCountingServer(t *testing.T, h http.HandlerFunc) *countingServer {
	t.Helper()
	s := &countingServer{}
	if h == nil {
		h = func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *countingServer) port() string {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	return p
}

// get fetches rawURL through g's client and returns the body.
func get(t *testing.T, g *Guard, rawURL string) (string, error) {
	t.Helper()
	return getWith(t, g.Client(), rawURL)
}

func getWith(t *testing.T, c *http.Client, rawURL string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("status %s", resp.Status)
	}
	return string(b), err
}

func wantDenied(t *testing.T, err error, what string) {
	t.Helper()
	var nd *DeniedError
	if !errors.As(err, &nd) {
		t.Fatalf("%s: err = %v (%T), want a *DeniedError", what, err, err)
	}
}

func mustGuard(t *testing.T, cfg Config) *Guard {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestDialRefusesAllowlistedNameResolvingToLoopback(t *testing.T) {
	srv := newCountingServer(t, nil)
	dns := staticDNS(t, map[string][]string{
		"api.test":        {"127.0.0.1"},
		"v6.api.test":     {"::1"},
		"mapped.api.test": {"::ffff:127.0.0.1"},
		"meta.api.test":   {"169.254.169.254"},
		"mixed.api.test":  {"93.184.216.34", "127.0.0.1"},
	})
	g := mustGuard(t, Config{AllowedDomains: []string{"api.test", "*.api.test"}, Resolver: dns.resolver()})
	for _, host := range []string{"api.test", "API.test.", "v6.api.test", "mapped.api.test", "meta.api.test", "mixed.api.test"} {
		_, err := get(t, g, "http://"+host+":"+srv.port()+"/")
		wantDenied(t, err, host)
		if _, _, err := g.CheckURLWithResolve(context.Background(), "http://"+host+":"+srv.port()+"/"); err == nil {
			t.Errorf("CheckURLWithResolve(%s) allowed", host)
		}
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("server got %d requests", n)
	}
}

func TestAllowPrivateHostsLetsNamedHostThrough(t *testing.T) {
	srv := newCountingServer(t, nil)
	dns := staticDNS(t, map[string][]string{
		"dev.test":   {"127.0.0.1"},
		"other.test": {"127.0.0.1"},
		"meta.test":  {"169.254.169.254"},
	})
	g := mustGuard(t, Config{
		AllowedDomains:    []string{"dev.test", "other.test", "meta.test", "127.0.0.1"},
		AllowPrivateHosts: []string{"dev.test", "meta.test", "127.0.0.1"},
		Resolver:          dns.resolver(),
	})
	if body, err := get(t, g, "http://dev.test:"+srv.port()+"/"); err != nil || body != "ok" {
		t.Fatalf("private host: %q, %v", body, err)
	}
	if body, err := get(t, g, "http://127.0.0.1:"+srv.port()+"/"); err != nil || body != "ok" {
		t.Fatalf("private IP literal: %q, %v", body, err)
	}
	if srv.hits.Load() != 2 {
		t.Fatalf("server got %d requests, want 2", srv.hits.Load())
	}
	_, err := get(t, g, "http://other.test:"+srv.port()+"/")
	wantDenied(t, err, "other.test: allowlisted, resolves to loopback, not a private host")
	_, err = get(t, g, "http://meta.test:"+srv.port()+"/")
	wantDenied(t, err, "meta.test: a private host resolving to metadata")
	if srv.hits.Load() != 2 {
		t.Fatalf("server got %d requests, want 2", srv.hits.Load())
	}
}

// TestDNSRebinding: the name resolves to a public address when checked and
// to 127.0.0.1 when dialled. The dial is refused: the guard dials the
// addresses it checked, resolved at dial time.
func TestDNSRebinding(t *testing.T) {
	srv := newCountingServer(t, nil)
	dns := startTestDNS(t, func(name string, qtype dnsmessage.Type, n int) ([]netip.Addr, bool) {
		if name != "rebind.test" {
			return nil, false
		}
		if qtype == dnsmessage.TypeA && n == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, true
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, true
	})
	g := mustGuard(t, Config{AllowedDomains: []string{"rebind.test"}, Resolver: dns.resolver()})
	rawURL := "http://rebind.test:" + srv.port() + "/"
	_, addrs, err := g.CheckURLWithResolve(context.Background(), rawURL)
	if err != nil {
		t.Fatalf("first look-up (public) refused: %v", err)
	}
	if len(addrs) != 1 || addrs[0] != netip.MustParseAddr("93.184.216.34") {
		t.Fatalf("first look-up gave %v", addrs)
	}
	_, err = get(t, g, rawURL)
	wantDenied(t, err, "rebound dial")
	if !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("error %q does not name the rebound address", err)
	}
	if dns.count("rebind.test", dnsmessage.TypeA) < 2 {
		t.Errorf("the dial did not resolve again")
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("server got %d requests", n)
	}
}

// TestControlHookChecksFinalAddress drives the dialer's Control hook on its
// own: whatever was resolved or checked before, a socket about to connect
// to a refused address is stopped before connect.
func TestControlHookChecksFinalAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	g := mustGuard(t, Config{AllowedDomains: []string{"public.test", "dev.test"}, AllowPrivateHosts: []string{"dev.test"}})

	// As if public.test had been resolved and checked as a public
	// address, and the socket then pointed at 127.0.0.1.
	c, err := g.dialer("public.test", port).DialContext(context.Background(), "tcp", ln.Addr().String())
	if err == nil {
		c.Close()
		t.Fatal("Control hook let the connection through")
	}
	wantDenied(t, err, "control hook")

	c, err = g.dialer("dev.test", port).DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("private host refused by the hook: %v", err)
	}
	c.Close()
	time.Sleep(50 * time.Millisecond)
	if n := accepted.Load(); n != 1 {
		t.Fatalf("listener accepted %d connections, want 1 (the private host's)", n)
	}
	if err := g.controlCheck("public.test", port, "not-an-ip:80"); err == nil {
		t.Fatal("hook accepted a non-IP address")
	}
}

func TestDialContextRefusals(t *testing.T) {
	dns := staticDNS(t, map[string][]string{"api.test": {"93.184.216.34"}, "v4only.test": {"127.0.0.1"}})
	g := mustGuard(t, Config{
		AllowedDomains:    []string{"api.test", "v4only.test", "127.0.0.1"},
		AllowPrivateHosts: []string{"v4only.test", "127.0.0.1"},
		Resolver:          dns.resolver(),
	})
	ctx := context.Background()
	for _, tc := range []struct{ network, addr string }{
		{"udp", "api.test:53"},
		{"unix", "/var/run/docker.sock"},
		{"tcp", "evil.test:80"},
		{"tcp", "api.test"},
		{"tcp", "api.test:0"},
		{"tcp", "api.test:http"},
		{"tcp", "2130706433:80"},
		{"tcp", "127.1:80"},
		{"tcp", "0x7f.0.0.1:80"},
		{"tcp", "[::ffff:127.0.0.1]:80"},
		{"tcp", "169.254.169.254:80"},
		{"tcp", "[fe80::1%lo]:80"},
		{"tcp", "api.test.evil.test:80"},
	} {
		c, err := g.DialContext(ctx, tc.network, tc.addr)
		if err == nil {
			c.Close()
			t.Errorf("DialContext(%s, %s) connected", tc.network, tc.addr)
			continue
		}
		wantDenied(t, err, tc.network+" "+tc.addr)
	}
	// tcp6 to a v4-only private host: no suitable address, not a refusal.
	if _, err := g.DialContext(ctx, "tcp6", "v4only.test:80"); err == nil {
		t.Error("tcp6 dial to an IPv4-only host connected")
	}
	// A failed look-up of an allowlisted name is an ordinary error.
	var nd *DeniedError
	g2 := mustGuard(t, Config{AllowedDomains: []string{"nxdomain.test"}, Resolver: dns.resolver()})
	_, err := g2.DialContext(ctx, "tcp", "nxdomain.test:80")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || errors.As(err, &nd) {
		t.Errorf("NXDOMAIN gave %v (%T), want a *net.DNSError", err, err)
	}
}

func TestCheckURLWithResolve(t *testing.T) {
	dns := staticDNS(t, map[string][]string{
		"api.test":  {"93.184.216.34", "2606:4700::1111"},
		"meta.test": {"93.184.216.34", "fd00:ec2::254"},
	})
	g := mustGuard(t, Config{AllowedDomains: []string{"api.test", "meta.test", "93.184.216.34"}, Resolver: dns.resolver()})
	ctx := context.Background()
	u, addrs, err := g.CheckURLWithResolve(ctx, "https://api.test/v1")
	if err != nil || u.Host != "api.test" || len(addrs) != 2 {
		t.Fatalf("api.test: %v %v %v", u, addrs, err)
	}
	if _, _, err := g.CheckURLWithResolve(ctx, "https://meta.test/"); err == nil {
		t.Fatal("meta.test (one metadata address) allowed")
	} else {
		wantDenied(t, err, "meta.test")
	}
	_, addrs, err = g.CheckURLWithResolve(ctx, "http://93.184.216.34/")
	if err != nil || len(addrs) != 1 || addrs[0].String() != "93.184.216.34" {
		t.Fatalf("IP literal: %v %v", addrs, err)
	}
	_, _, err = g.CheckURLWithResolve(ctx, "http://evil.test/")
	wantDenied(t, err, "evil.test")
}

func TestRedirectToNonAllowlistedHostRefused(t *testing.T) {
	target := newCountingServer(t, nil)
	var loc atomic.Value
	origin := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, loc.Load().(string), http.StatusFound)
	})
	dns := staticDNS(t, map[string][]string{"api.test": {"127.0.0.1"}, "evil.test": {"127.0.0.1"}})
	g := mustGuard(t, Config{
		AllowedDomains:    []string{"api.test"},
		AllowPrivateHosts: []string{"api.test", "evil.test", "127.0.0.1"},
		Resolver:          dns.resolver(),
	})
	for _, to := range []string{
		"http://evil.test:" + target.port() + "/",
		"http://127.0.0.1:" + target.port() + "/",
		"http://api.test@evil.test:" + target.port() + "/",
		"http://169.254.169.254/latest/meta-data/",
		"file:///etc/passwd",
		"gopher://api.test:" + target.port() + "/",
	} {
		loc.Store(to)
		_, err := get(t, g, "http://api.test:"+origin.port()+"/start")
		wantDenied(t, err, "redirect to "+to)
	}
	if n := target.hits.Load(); n != 0 {
		t.Fatalf("redirect target got %d requests", n)
	}
	// A redirect to an allowlisted host is followed. The target listens on
	// another port, so the allowlist names that host:port (a redirect
	// otherwise stays on its port: TestRedirectPortScoped).
	g = mustGuard(t, Config{
		AllowedDomains:    []string{"api.test", "api.test:" + target.port()},
		AllowPrivateHosts: []string{"api.test", "evil.test", "127.0.0.1"},
		Resolver:          dns.resolver(),
	})
	loc.Store("http://api.test:" + target.port() + "/ok")
	if body, err := get(t, g, "http://api.test:"+origin.port()+"/start"); err != nil || body != "ok" {
		t.Fatalf("allowed redirect: %q %v", body, err)
	}
}

// allowed_domains is port-scoped for redirects: an entry without a port lets
// the author's URL use any port, but a server cannot bounce the call to
// another port (another service) of an allowed host unless that host:port
// is listed; an entry with a port allows that port only.
func TestRedirectPortScoped(t *testing.T) {
	target := newCountingServer(t, nil)
	var loc atomic.Value
	origin := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			http.Redirect(w, r, "/ok", http.StatusFound)
			return
		}
		if r.URL.Path == "/ok" {
			w.Write([]byte("ok"))
			return
		}
		http.Redirect(w, r, loc.Load().(string), http.StatusFound)
	})
	dns := staticDNS(t, map[string][]string{"api.test": {"127.0.0.1"}, "b.api.test": {"127.0.0.1"}, "c.api.test": {"127.0.0.1"}})
	private := []string{"api.test", "b.api.test", "c.api.test", "127.0.0.1"}
	g := mustGuard(t, Config{AllowedDomains: []string{"api.test", "*.api.test", "127.0.0.1"}, AllowPrivateHosts: private, Resolver: dns.resolver()})
	for _, to := range []string{
		"http://api.test:" + target.port() + "/",
		"http://API.test.:" + target.port() + "/",
		"http://b.api.test:" + target.port() + "/",
		"http://127.0.0.1:" + target.port() + "/",
		"//api.test:" + target.port() + "/",
	} {
		loc.Store(to)
		_, err := get(t, g, "http://api.test:"+origin.port()+"/start")
		wantDenied(t, err, "redirect to "+to)
	}
	if n := target.hits.Load(); n != 0 {
		t.Fatalf("redirect target got %d requests", n)
	}
	// On the same port the chain goes on, to the same or another allowed host.
	if body, err := get(t, g, "http://api.test:"+origin.port()+"/same"); err != nil || body != "ok" {
		t.Fatalf("same-port redirect: %q %v", body, err)
	}
	loc.Store("http://c.api.test:" + origin.port() + "/ok")
	if body, err := get(t, g, "http://api.test:"+origin.port()+"/start"); err != nil || body != "ok" {
		t.Fatalf("same-port redirect to another host: %q %v", body, err)
	}
	// A wildcard entry with the port lists it for every sub-domain.
	g = mustGuard(t, Config{AllowedDomains: []string{"api.test", "*.api.test:" + target.port()}, AllowPrivateHosts: private, Resolver: dns.resolver()})
	loc.Store("http://b.api.test:" + target.port() + "/x")
	if _, err := get(t, g, "http://api.test:"+origin.port()+"/start"); err != nil {
		t.Fatalf("listed wildcard port: %v", err)
	}
	// An entry with a port allows that port only, in the URL and at dial.
	g = mustGuard(t, Config{AllowedDomains: []string{"api.test:" + origin.port()}, AllowPrivateHosts: private, Resolver: dns.resolver()})
	if _, err := g.CheckURL("http://api.test:" + origin.port() + "/"); err != nil {
		t.Fatalf("listed port: %v", err)
	}
	for _, u := range []string{"http://api.test/", "http://api.test:" + target.port() + "/", "https://api.test/"} {
		_, err := g.CheckURL(u)
		wantDenied(t, err, u)
	}
	if _, err := g.DialContext(context.Background(), "tcp", "api.test:"+target.port()); err == nil {
		t.Fatal("dial to an unlisted port allowed")
	}
}

func TestCheckPortMove(t *testing.T) {
	g := mustGuard(t, Config{AllowedDomains: []string{"a.test", "a.test:8443", "[2001:db8::1]:9000"}})
	for _, tc := range []struct {
		from, to string
		ok       bool
	}{
		{"http://a.test/", "https://a.test/", true},           // default ports: the upgrade
		{"https://a.test/", "https://a.test/x", true},         // same port
		{"http://a.test:8080/", "http://a.test:8080/x", true}, // same explicit port
		{"http://a.test:8080/", "http://a.test/", false},
		{"http://a.test/", "http://a.test:22/", false},
		{"http://a.test/", "http://a.test:8443/", true}, // listed
		{"https://a.test/", "https://[2001:db8::1]:9000/", true},
		{"https://a.test/", "https://[2001:db8::1]:9001/", false},
		{"http://a.test:80/", "http://a.test:443/", false},
	} {
		from, _ := url.Parse(tc.from)
		to, _ := url.Parse(tc.to)
		if err := g.CheckPortMove(from, to); (err == nil) != tc.ok {
			t.Errorf("%s -> %s: %v, want ok=%v", tc.from, tc.to, err, tc.ok)
		}
	}
}

func TestRedirectChainLimit(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		if n > 0 {
			http.Redirect(w, r, "/r/"+strconv.Itoa(n-1), http.StatusFound)
			return
		}
		io.WriteString(w, "done")
	})
	g := mustGuard(t, Config{AllowedDomains: []string{"127.0.0.1"}, AllowPrivateHosts: []string{"127.0.0.1"}})
	if body, err := get(t, g, srv.URL+"/r/5"); err != nil || body != "done" {
		t.Fatalf("5 redirects: %q %v", body, err)
	}
	before := srv.hits.Load()
	_, err := get(t, g, srv.URL+"/r/6")
	wantDenied(t, err, "6 redirects")
	if got := srv.hits.Load() - before; got != MaxRedirects+1 {
		t.Fatalf("server saw %d requests for a 6-redirect chain, want %d", got, MaxRedirects+1)
	}
}

func TestRedirectDowngradeRefused(t *testing.T) {
	plain := newCountingServer(t, nil)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			io.WriteString(w, "tls ok")
			return
		}
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, "/same", http.StatusFound)
			return
		}
		http.Redirect(w, r, plain.URL+"/", http.StatusFound)
	}))
	defer tlsSrv.Close()
	g := mustGuard(t, Config{AllowedDomains: []string{"127.0.0.1"}, AllowPrivateHosts: []string{"127.0.0.1"}})
	tr := g.Transport()
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	tr.TLSClientConfig.RootCAs = pool
	c := &http.Client{Transport: tr, CheckRedirect: g.CheckRedirect}
	if body, err := getWith(t, c, tlsSrv.URL+"/hop"); err != nil || body != "tls ok" {
		t.Fatalf("https→https redirect: %q %v", body, err)
	}
	_, err := getWith(t, c, tlsSrv.URL+"/down")
	wantDenied(t, err, "https→http")
	if n := plain.hits.Load(); n != 0 {
		t.Fatalf("plain server got %d requests", n)
	}
}

// TestProxyEnvIgnored: with every proxy variable pointing at a listener,
// the guarded transport connects directly and the listener sees nothing.
func TestProxyEnvIgnored(t *testing.T) {
	proxy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	var proxied atomic.Int64
	go func() {
		for {
			c, err := proxy.Accept()
			if err != nil {
				return
			}
			proxied.Add(1)
			c.Close()
		}
	}()
	proxyURL := "http://" + proxy.Addr().String()
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"} {
		t.Setenv(k, proxyURL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	srv := newCountingServer(t, nil)
	dns := staticDNS(t, map[string][]string{"api.test": {"127.0.0.1"}})
	g := mustGuard(t, Config{AllowedDomains: []string{"api.test"}, AllowPrivateHosts: []string{"api.test"}, Resolver: dns.resolver()})
	target := "http://api.test:" + srv.port() + "/"

	// The environment would send this URL to the proxy.
	u, _ := url.Parse(target)
	if p, err := httpproxy.FromEnvironment().ProxyFunc()(u); err != nil || p == nil {
		t.Fatalf("control: environment proxy for %s is %v, %v", target, p, err)
	}
	if body, err := get(t, g, target); err != nil || body != "ok" {
		t.Fatalf("direct request: %q %v", body, err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := proxied.Load(); n != 0 {
		t.Fatalf("proxy listener got %d connections", n)
	}
	if srv.hits.Load() != 1 {
		t.Fatalf("server got %d requests, want 1", srv.hits.Load())
	}
	if g.Transport().Proxy != nil {
		t.Fatal("Transport has a Proxy func")
	}
}

// TestTransportRefusesCleartextHTTP2: the transport never speaks h2c.
func TestTransportRefusesCleartextHTTP2(t *testing.T) {
	g := mustGuard(t, Config{AllowedDomains: []string{"a.test"}})
	tr := g.Transport()
	if tr.Protocols == nil || tr.Protocols.UnencryptedHTTP2() || !tr.Protocols.HTTP1() {
		t.Fatalf("protocols = %v", tr.Protocols)
	}
	var seen atomic.Value
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Proto)
	})
	g2 := mustGuard(t, Config{AllowedDomains: []string{"127.0.0.1"}, AllowPrivateHosts: []string{"127.0.0.1"}})
	if _, err := get(t, g2, srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	if p := seen.Load(); p != "HTTP/1.1" {
		t.Fatalf("cleartext request used %v", p)
	}
}

// TestAnyHost: "*" lets every host's name through the allowlist, and
// every address check still applies: names that resolve to loopback,
// private or metadata addresses and such IP literals are refused at
// dial time, unless AllowPrivateHosts names the host.
func TestAnyHost(t *testing.T) {
	srv := newCountingServer(t, nil)
	dns := staticDNS(t, map[string][]string{
		"anything.test": {"127.0.0.1"},
		"meta.test":     {"169.254.169.254"},
		"private.test":  {"10.1.2.3"},
		"dev.test":      {"127.0.0.1"},
	})
	g := mustGuard(t, Config{AllowedDomains: []string{"*"}, AllowPrivateHosts: []string{"dev.test"}, Resolver: dns.resolver()})
	for _, u := range []string{"https://example.com/x", "http://93.184.216.34:8080/", "https://a.b.c.example.org/"} {
		if _, err := g.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%s): %v", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://[::1]/", "http://10.0.0.1/", "http://2130706433/", "ftp://example.com/"} {
		if _, err := g.CheckURL(u); err == nil {
			t.Errorf("CheckURL(%s) allowed", u)
		}
	}
	for _, host := range []string{"anything.test", "meta.test", "private.test"} {
		_, err := get(t, g, "http://"+host+":"+srv.port()+"/")
		wantDenied(t, err, host)
	}
	if srv.hits.Load() != 0 {
		t.Fatalf("server got %d requests", srv.hits.Load())
	}
	if body, err := get(t, g, "http://dev.test:"+srv.port()+"/"); err != nil || body != "ok" {
		t.Fatalf("a named private host: %q, %v", body, err)
	}
	if !AllowsAnyHost([]string{"a.com", " * "}) || AllowsAnyHost([]string{"*.a.com"}) {
		t.Error("AllowsAnyHost")
	}
}
