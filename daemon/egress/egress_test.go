package egress

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/netguard"
)

const secret = "Zq8vK2mXw9rTj4Lp"

type seen struct {
	mu                 sync.Mutex
	path, header, body string
	n                  int
}

// upstream is a real API on 127.0.0.1 that echoes the key it was sent.
func upstream(t *testing.T, s *seen) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.path, s.header, s.body = r.URL.RequestURI(), r.Header.Get("X-Key"), string(b)
		s.n++
		s.mu.Unlock()
		switch r.URL.Path {
		case "/big":
			w.Write(bytes.Repeat([]byte("a"), 1000))
		case "/redirect":
			http.Redirect(w, r, "/echo", http.StatusFound)
		default:
			w.Header().Set("X-Echo", r.Header.Get("X-Key"))
			w.Write([]byte("key=" + r.Header.Get("X-Key")))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newProxy(t *testing.T) *Proxy {
	p, err := Listen(netguard.NewCache(4), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// grantFor renders a call to srv's path twice: with the secret and with
// a stand-in token.
func grantFor(srv *httptest.Server, path string) Grant {
	u, _ := url.Parse(srv.URL)
	base := "http://localhost:" + u.Port()
	tok := NewToken()
	mk := func(v string) *executors.HTTPCall {
		return &executors.HTTPCall{Method: "POST", URL: base + path + "?q=" + v, Headers: map[string]string{"X-Key": v},
			Body: []byte(`{"k":"` + v + `"}`), AllowedDomains: []string{"localhost"}, AllowPrivateHosts: []string{"localhost"},
			MaxResponseBytes: 100}
	}
	return Grant{Real: mk(secret), Rendered: mk(tok), Deadline: time.Now().Add(time.Minute),
		Redact: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(secret), []byte("[REDACTED]")) }}
}

// send makes the executor's side of a request through the proxy.
func send(t *testing.T, p *Proxy, token string, c *executors.HTTPCall) *http.Response {
	t.Helper()
	return sendTo(t, "tcp", p.Addr(), token, c)
}

// sendTo is send through the proxy listening on network, addr.
func sendTo(t *testing.T, network, addr, token string, c *executors.HTTPCall) *http.Response {
	t.Helper()
	req, err := http.NewRequest(c.Method, c.URL, bytes.NewReader(c.Body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set(executors.EgressTokenHeader, token)
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: "egress"}), DialContext: dial, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func egressErr(resp *http.Response) string { return resp.Header.Get(executors.EgressErrorHeader) }

func TestProxyPutsSecretsIn(t *testing.T) {
	var s seen
	srv := upstream(t, &s)
	p := newProxy(t)
	g := grantFor(srv, "/echo")
	token, revoke := p.Add(g)
	defer revoke()

	resp := send(t, p, token, g.Rendered)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || egressErr(resp) != "" {
		t.Fatalf("status %d, egress error %q", resp.StatusCode, egressErr(resp))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.header != secret || s.path != "/echo?q="+secret || s.body != `{"k":"`+secret+`"}` {
		t.Fatalf("API got path %q header %q body %q", s.path, s.header, s.body)
	}
	// The API's echo of the key comes back redacted, body and headers.
	if string(body) != "key=[REDACTED]" || resp.Header.Get("X-Echo") != "[REDACTED]" {
		t.Fatalf("response %q, X-Echo %q", body, resp.Header.Get("X-Echo"))
	}
	if resp.ContentLength != int64(len(body)) {
		t.Fatalf("Content-Length %d for %d bytes", resp.ContentLength, len(body))
	}
}

func TestProxyRefuses(t *testing.T) {
	var s seen
	srv := upstream(t, &s)
	p := newProxy(t)

	t.Run("unknown token", func(t *testing.T) {
		g := grantFor(srv, "/echo")
		resp := send(t, p, NewToken(), g.Rendered)
		if resp.StatusCode != 403 || !strings.HasPrefix(egressErr(resp), "policy_denied: no such call") {
			t.Fatalf("%d %q", resp.StatusCode, egressErr(resp))
		}
	})
	t.Run("not the rendered request", func(t *testing.T) {
		for name, change := range map[string]func(c *executors.HTTPCall){
			"path":   func(c *executors.HTTPCall) { c.URL = strings.Replace(c.URL, "/echo", "/other", 1) },
			"body":   func(c *executors.HTTPCall) { c.Body = []byte(`{}`) },
			"header": func(c *executors.HTTPCall) { c.Headers = map[string]string{"X-Key": "other"} },
			"method": func(c *executors.HTTPCall) { c.Method = "PUT" },
		} {
			g := grantFor(srv, "/echo")
			token, revoke := p.Add(g)
			c := *g.Rendered
			change(&c)
			resp := send(t, p, token, &c)
			revoke()
			if resp.StatusCode != 403 || !strings.HasPrefix(egressErr(resp), "policy_denied:") {
				t.Errorf("%s changed: %d %q", name, resp.StatusCode, egressErr(resp))
			}
		}
	})
	t.Run("revoked and expired grants", func(t *testing.T) {
		g := grantFor(srv, "/echo")
		token, revoke := p.Add(g)
		revoke()
		if resp := send(t, p, token, g.Rendered); resp.StatusCode != 403 {
			t.Fatalf("revoked grant: %d", resp.StatusCode)
		}
		g.Deadline = time.Now().Add(-time.Second)
		token, revoke = p.Add(g)
		defer revoke()
		if resp := send(t, p, token, g.Rendered); resp.StatusCode != 403 {
			t.Fatalf("expired grant: %d", resp.StatusCode)
		}
	})
	t.Run("request count", func(t *testing.T) {
		g := grantFor(srv, "/echo")
		token, revoke := p.Add(g)
		defer revoke()
		for i := range netguard.MaxRedirects + 2 {
			c := g.Rendered
			if i > 0 { // the executor following redirects: sent as is
				c = &executors.HTTPCall{Method: "GET", URL: strings.Split(g.Rendered.URL, "?")[0]}
			}
			resp := send(t, p, token, c)
			if want := i <= netguard.MaxRedirects; (resp.StatusCode == 200) != want {
				t.Fatalf("request %d: %d %q", i+1, resp.StatusCode, egressErr(resp))
			}
		}
	})
	t.Run("follow-up outside the allowlist", func(t *testing.T) {
		g := grantFor(srv, "/redirect")
		token, revoke := p.Add(g)
		defer revoke()
		if resp := send(t, p, token, g.Rendered); resp.StatusCode != http.StatusFound {
			t.Fatalf("first: %d %q", resp.StatusCode, egressErr(resp))
		}
		u, _ := url.Parse(srv.URL)
		resp := send(t, p, token, &executors.HTTPCall{Method: "GET", URL: "http://127.0.0.1:" + u.Port() + "/echo"})
		if resp.StatusCode != 403 || !strings.HasPrefix(egressErr(resp), "policy_denied:") {
			t.Fatalf("127.0.0.1 follow-up: %d %q", resp.StatusCode, egressErr(resp))
		}
	})
	t.Run("follow-up to another port", func(t *testing.T) {
		var other seen
		srv2 := upstream(t, &other)
		u2, _ := url.Parse(srv2.URL)
		g := grantFor(srv, "/redirect")
		token, revoke := p.Add(g)
		defer revoke()
		if resp := send(t, p, token, g.Rendered); resp.StatusCode != http.StatusFound {
			t.Fatalf("first: %d %q", resp.StatusCode, egressErr(resp))
		}
		for _, to := range []string{"http://localhost:" + u2.Port() + "/echo", "http://LOCALHOST.:" + u2.Port() + "/echo"} {
			resp := send(t, p, token, &executors.HTTPCall{Method: "GET", URL: to})
			if resp.StatusCode != 403 || !strings.Contains(egressErr(resp), "port") {
				t.Fatalf("%s: %d %q", to, resp.StatusCode, egressErr(resp))
			}
		}
		other.mu.Lock()
		reached := other.path
		other.mu.Unlock()
		if reached != "" {
			t.Fatalf("the other port was reached: %q", reached)
		}
		// Listed as host:port, the move is relayed.
		g = grantFor(srv, "/redirect")
		g.Real.AllowedDomains = append(g.Real.AllowedDomains, "localhost:"+u2.Port())
		token2, revoke2 := p.Add(g)
		defer revoke2()
		send(t, p, token2, g.Rendered)
		if resp := send(t, p, token2, &executors.HTTPCall{Method: "GET", URL: "http://localhost:" + u2.Port() + "/echo"}); resp.StatusCode != 200 {
			t.Fatalf("listed port: %d %q", resp.StatusCode, egressErr(resp))
		}
	})
}

// The response body is relayed up to the call's limit plus one byte, so
// the executor sees that it was over and says so.
func TestProxyBoundsResponse(t *testing.T) {
	var s seen
	srv := upstream(t, &s)
	p := newProxy(t)
	g := grantFor(srv, "/big")
	token, revoke := p.Add(g)
	defer revoke()
	resp := send(t, p, token, g.Rendered)
	body, _ := io.ReadAll(resp.Body)
	if int64(len(body)) != g.Real.MaxResponseBytes+1 {
		t.Fatalf("relayed %d bytes, want %d", len(body), g.Real.MaxResponseBytes+1)
	}
}

// An unreachable API is the proxy's own error, the secret not in it.
func TestProxyUnreachable(t *testing.T) {
	var s seen
	srv := upstream(t, &s)
	p := newProxy(t)
	g := grantFor(srv, "/echo")
	srv.Close()
	token, revoke := p.Add(g)
	defer revoke()
	resp := send(t, p, token, g.Rendered)
	if resp.StatusCode != http.StatusBadGateway || !strings.HasPrefix(egressErr(resp), "unreachable: ") ||
		strings.Contains(egressErr(resp), secret) {
		t.Fatalf("%d %q", resp.StatusCode, egressErr(resp))
	}
}

func TestNewTokenIsEscapeProof(t *testing.T) {
	a, b := NewToken(), NewToken()
	if a == b || len(a) != 35 {
		t.Fatalf("tokens %q %q", a, b)
	}
	if url.QueryEscape(a) != a || url.PathEscape(a) != a {
		t.Fatalf("token %q changes when escaped", a)
	}
}

// The proxy's own errors about the real request never quote its secret.
func TestProxyErrorsAreRedacted(t *testing.T) {
	var s seen
	srv := upstream(t, &s)
	p := newProxy(t)
	g := grantFor(srv, "/echo")
	g.Real.AllowedDomains = []string{"api.example.com"} // the real URL's host is not on it
	g.Real.URL = strings.Replace(g.Real.URL, "/echo", "/echo/"+secret, 1)
	token, revoke := p.Add(g)
	defer revoke()
	resp := send(t, p, token, g.Rendered)
	if e := egressErr(resp); resp.StatusCode != 403 || !strings.HasPrefix(e, "policy_denied:") || strings.Contains(e, secret) ||
		!strings.Contains(e, "[REDACTED]") {
		t.Fatalf("%d %q", resp.StatusCode, e)
	}
	if s.n != 0 {
		t.Fatal("the API was reached")
	}
}

// The proxy serves a Unix socket too (the one containers reach), with the
// same grants: a live token's request gets its secret put in, a wrong one
// is refused, and Close closes the socket.
func TestProxyServesUnixSocket(t *testing.T) {
	var s seen
	srv := upstream(t, &s)
	p := newProxy(t)
	sock := filepath.Join(t.TempDir(), "egress.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	p.Serve(ln)
	viaSocket := func(token string, c *executors.HTTPCall) *http.Response { return sendTo(t, "unix", sock, token, c) }
	g := grantFor(srv, "/echo")
	token, revoke := p.Add(g)
	defer revoke()
	if resp := viaSocket(NewToken(), g.Rendered); resp.StatusCode != 403 || !strings.HasPrefix(egressErr(resp), "policy_denied: no such call") {
		t.Fatalf("wrong token: %d %q", resp.StatusCode, egressErr(resp))
	}
	resp := viaSocket(token, g.Rendered)
	body, _ := io.ReadAll(resp.Body)
	s.mu.Lock()
	header := s.header
	s.mu.Unlock()
	if resp.StatusCode != 200 || header != secret || string(body) != "key=[REDACTED]" {
		t.Fatalf("status %d %q, API got %q, body %q", resp.StatusCode, egressErr(resp), header, body)
	}
	p.Close()
	if c, err := net.Dial("unix", sock); err == nil {
		c.Close()
		t.Fatal("the socket still answers after Close")
	}
}
