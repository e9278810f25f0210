package daemon

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
)

// TestFetchNeverReachesOwnListeners is the red team's Low: with
// allow_private_hosts naming 127.0.0.1, fetch_url read the person-only
// metrics listener. The daemon's own listeners (metrics, review page,
// MCP, egress proxy) are refused to every tool, whatever the list says;
// a server of the person's on 127.0.0.1 is still reached; an entry with
// a port opens that port only.
func TestFetchNeverReachesOwnListeners(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("dev server")) }))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("other")) }))
	defer other.Close()
	td := startDaemon(t, "", func(c *Config) {
		c.HTTP.AllowPrivateHosts = []string{"127.0.0.1", "localhost:" + portOf(t, other.URL)}
		c.Metrics.Listen = "127.0.0.1:0"
		c.UI.Listen = "127.0.0.1:0"
		c.MCP.Listen = "127.0.0.1:0"
	})
	path := filepath.Join(t.TempDir(), "f.yaml")
	writeFile(t, path, "name: lw\ntoolsets:\n  fetch: {allowed_domains: [\"*\"]}\n")
	w, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := withToken(td.client, w.Token)
	for _, u := range []string{srv.URL + "/", "http://localhost:" + portOf(t, other.URL) + "/"} {
		if r, err := callTool(agent, "fetch_url", map[string]any{"url": u}); err != nil || r.IsError {
			t.Fatalf("fetch %s: %v %s", u, err, r.Result)
		}
	}
	// localhost is named for the other server's port only.
	if _, err := callTool(agent, "fetch_url", map[string]any{"url": "http://localhost:" + portOf(t, srv.URL) + "/"}); codeOf(err) != errdefs.PolicyDenied {
		t.Errorf("localhost on a port its entry does not name: %v, want policy_denied", err)
	}
	own := map[string]string{
		"metrics": td.d.metricsLn.Addr().String(), "ui": td.d.ui.ln.Addr().String(),
		"mcp": td.d.mcpLn.Addr().String(), "egress": td.d.egress.Addr(),
	}
	for name, addr := range own {
		for _, path := range []string{"/", "/metrics"} {
			r, err := callTool(agent, "fetch_url", map[string]any{"url": "http://" + addr + path})
			if codeOf(err) != errdefs.PolicyDenied || !strings.Contains(err.Error(), "denied") {
				t.Errorf("fetch of the daemon's %s listener %s%s: %v %s, want policy_denied", name, addr, path, err, r.Result)
			}
		}
	}
}

// TestPrivateHostsChecked: a bad allow_private_hosts entry stops the
// config from loading, with the key named; the new forms load.
func TestPrivateHostsChecked(t *testing.T) {
	if _, err := LoadConfig("", map[string]any{"http.allow_private_hosts": []string{"localhost:8080", "10.0.0.0/8:5432", "!127.0.0.1:9", "[::1]:80"}}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"10.0.0.1/8", "localhost:0", "!localhost", "*.local"} {
		_, err := LoadConfig("", map[string]any{"http.allow_private_hosts": []string{bad}})
		if err == nil || !strings.Contains(err.Error(), "http.allow_private_hosts") {
			t.Errorf("%q: %v, want a refusal naming http.allow_private_hosts", bad, err)
		}
	}
}

func portOf(t *testing.T, rawURL string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(rawURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
