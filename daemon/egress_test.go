package daemon

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/executors"
)

// An HTTP tool's secrets go into its request at the daemon's egress
// proxy: the executor gets stand-in tokens in the header, the query and
// the body, the API gets the values, each escaped for where it lands, and
// an API echoing the key hands the executor a redaction.
func TestEgressKeepsSecretsOutOfExecutor(t *testing.T) {
	const secret = "s3c+r/e=t&Zq8vK2mXw9\"x" // needs escaping in a query and in JSON
	var (
		mu   sync.Mutex
		seen struct{ auth, q, body string }
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen.auth, seen.q, seen.body = r.Header.Get("X-Api-Key"), r.URL.Query().Get("key"), string(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo", r.Header.Get("X-Api-Key"))
		json.NewEncoder(w).Encode(map[string]string{"echo": r.Header.Get("X-Api-Key")})
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)

	var (
		omu  sync.Mutex
		sent []*executors.Request
	)
	td := startDaemon(t, "", func(c *Config) { c.HTTP.AllowPrivateHosts = []string{"localhost"} })
	td.d.disp.Observe(func(r *executors.Request) {
		omu.Lock()
		defer omu.Unlock()
		c := *r.HTTP
		sent = append(sent, &executors.Request{HTTP: &c})
	})
	c := td.client
	v := secret
	putSecret(t, c, "api_key", api.SecretValue{Value: &v})
	create(t, c, `{"name":"post","description":"d","kind":"http","secrets":["api_key"],"http":{"method":"POST",
		"url":"http://localhost:`+u.Port()+`/v1","params":{"key":"{{secret.api_key}}"},"headers":{"X-Api-Key":"{{secret.api_key}}"},
		"body":"{\"auth\":\"{{secret.api_key}}\",\"n\":1}","allowed_domains":["localhost"]}}`)

	r, err := callTool(c, "post", map[string]any{})
	if err != nil || r.IsError {
		t.Fatalf("post: %v %+v", err, r)
	}
	mu.Lock()
	got := seen
	mu.Unlock()
	if got.auth != secret || got.q != secret {
		t.Fatalf("API got header %q, query %q; want the secret in both", got.auth, got.q)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(got.body), &body); err != nil || body["auth"] != secret {
		t.Fatalf("API got body %s (%v)", got.body, err)
	}

	omu.Lock()
	defer omu.Unlock()
	if len(sent) != 1 {
		t.Fatalf("%d executor requests", len(sent))
	}
	h := sent[0].HTTP
	if h.Egress == nil || h.Egress.Token == "" || h.Egress.Addr == "" {
		t.Fatalf("executor request has no egress: %+v", h)
	}
	all := h.URL + string(h.Body) + strings.Join(mapValues(h.Headers), " ")
	for _, form := range []string{secret, url.QueryEscape(secret), "Zq8vK2mXw9"} {
		if strings.Contains(all, form) {
			t.Fatalf("the executor got the secret (%q) in %s", form, all)
		}
	}
	if !strings.Contains(h.Headers["X-Api-Key"], "tcx") {
		t.Fatalf("header holds no stand-in token: %q", h.Headers["X-Api-Key"])
	}
	// The echo came back redacted, and the call's grant is gone.
	if strings.Contains(string(r.Result), "Zq8vK2mXw9") || !strings.Contains(string(r.Result), "[REDACTED:secret:api_key]") {
		t.Fatalf("result %s", r.Result)
	}
	if n := td.d.egress.Len(); n != 0 {
		t.Fatalf("%d grants live after the call", n)
	}

	// A stolen token is worth nothing once its call is done.
	req, _ := http.NewRequest("GET", srv.URL+"/v1", nil)
	req.Header.Set(executors.EgressTokenHeader, h.Egress.Token)
	proxyURL, _ := url.Parse("http://" + h.Egress.Addr)
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(resp.Header.Get(executors.EgressErrorHeader), "policy_denied:") {
		t.Fatalf("stale token: %d %q", resp.StatusCode, resp.Header.Get(executors.EgressErrorHeader))
	}

	// Nothing on disk holds the value either.
	td.stop()
	noPlaintext(t, td.cfg.DataDir, secret)
}

// A tool without secrets talks to the API directly, as before.
func TestEgressOnlyForSecrets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	td := startDaemon(t, "", func(c *Config) { c.HTTP.AllowPrivateHosts = []string{"localhost"} })
	var egressUsed atomic.Bool
	td.d.disp.Observe(func(r *executors.Request) { egressUsed.Store(r.HTTP.Egress != nil) })
	create(t, td.client, `{"name":"plain","description":"d","kind":"http","http":{"method":"GET","url":"http://localhost:`+u.Port()+`/","allowed_domains":["localhost"]}}`)
	if r, err := callTool(td.client, "plain", map[string]any{}); err != nil || r.IsError {
		t.Fatalf("plain: %v %+v", err, r)
	}
	if egressUsed.Load() {
		t.Fatal("a call without secrets went through the egress proxy")
	}
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
