package daemon

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"

	"github.com/toolcage/toolcage/errdefs"
)

// A real daemon scraped after a few calls: every family the issue names is
// there with the values those calls imply, on the socket and on the
// loopback listener alike, and promtool's lint finds nothing.
func TestMetricsScrape(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) {
		c.Metrics.Listen = "127.0.0.1:0"
		c.Scrub.Rules = []ScrubRuleConfig{{Kind: "acme-token", Pattern: `\b(acme_[A-Za-z0-9]{32})\b`, SecretGroup: 1, Keywords: []string{"acme_"}, MinEntropy: 3}}
	})
	create(t, td.client, jsTool)
	create(t, td.client, "name: leaky\ndescription: leaks\nkind: js\njs: {code: 'return \"key acme_Zq8vK2mXw9rTj4LpZq8vK2mXw9rTj4Lp\"'}")
	create(t, td.client, "name: ask_js\ndescription: asks\nkind: js\napproval: ask\njs: {code: 'return 1'}")
	for range 2 {
		if _, err := callTool(td.client, "adder", map[string]any{"a": 1, "b": 2}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := callTool(td.client, "adder", map[string]any{"a": "x"}); codeOf(err) != errdefs.InvalidArguments {
		t.Fatalf("bad arguments: %v", err)
	}
	if r, err := callTool(td.client, "leaky", map[string]any{}); err != nil || !strings.Contains(string(r.Result), "[REDACTED:acme-token]") {
		t.Fatalf("leaky: %v %s", err, r.Result)
	}
	if _, err := callTool(noWait(td.client), "ask_js", map[string]any{}); codeOf(err) != errdefs.ApprovalRequired {
		t.Fatalf("ask_js: %v", err)
	}

	addr := td.d.MetricsAddr()
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("metrics addr %q", addr)
	}
	tcp := scrape(t, http.DefaultClient, "http://"+addr+"/metrics")
	sock := scrape(t, &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", td.cfg.Socket)
	}}}, "http://x/v1/metrics")
	for _, body := range []string{tcp, sock} {
		for _, want := range []string{
			`toolcage_calls_total{kind="js",outcome="ok",tool="adder"} 2`,
			`toolcage_calls_total{kind="js",outcome="refused",tool="adder"} 1`,
			`toolcage_calls_total{kind="js",outcome="refused",tool="ask_js"} 1`,
			`toolcage_call_duration_seconds_count{kind="js",outcome="ok"} 3`,
			`toolcage_redactions_total{tool="leaky"} 1`,
			`toolcage_approvals_pending 1`,
			`state="idle"`,
			"toolcage_executors_started_total", "toolcage_executors_retired_total 0",
			"toolcage_executors_replaced_total 0", "toolcage_sandboxes_started_total",
			"toolcage_uptime_seconds", "go_goroutines", "process_resident_memory_bytes",
		} {
			if !strings.Contains(body, want) {
				t.Fatalf("metrics lack %q:\n%s", want, body)
			}
		}
	}
	probs, err := promlint.New(strings.NewReader(tcp)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != 0 {
		t.Fatalf("promtool check metrics: %v", probs)
	}

	fams, err := td.d.metrics.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	started := gauge(t, fams, "toolcage_executors_started_total")
	if started < 1 {
		t.Fatalf("executors started = %v", started)
	}
	sb := gauge(t, fams, "toolcage_sandboxes_started_total")
	if td.d.sandbox != nil && sb != started {
		t.Fatalf("sandboxes started %v, executors started %v: each executor has its sandbox", sb, started)
	}
	if td.d.sandbox == nil && sb != 0 {
		t.Fatalf("sandboxes started %v with the sandbox off", sb)
	}

	// The loopback listener goes with the daemon.
	td.stop()
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("metrics listener %s still open after shutdown", addr)
	}
}

func scrape(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", url, resp.StatusCode, err, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET %s: content type %q", url, ct)
	}
	return string(b)
}

// gauge is the value of an unlabelled counter or gauge.
func gauge(t *testing.T, fams []*dto.MetricFamily, name string) float64 {
	t.Helper()
	for _, f := range fams {
		if f.GetName() != name || len(f.Metric) != 1 {
			continue
		}
		m := f.Metric[0]
		if m.Counter != nil {
			return m.Counter.GetValue()
		}
		return m.Gauge.GetValue()
	}
	t.Fatalf("no family %s", name)
	return 0
}
