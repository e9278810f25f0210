package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// rawDo sends a request with exactly the headers given (repeats kept), for
// what api.Client cannot send.
func rawDo(t *testing.T, socket, method, path string, hdr http.Header, body string) (int, api.ErrorDetail) {
	t.Helper()
	tr := socketTransport(socket)
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	req, err := http.NewRequest(method, "http://toolcage"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var eb api.ErrorBody
	_ = json.Unmarshal(b, &eb)
	return resp.StatusCode, eb.Error
}

// socketTransport dials the daemon's socket, a connection per request
// (closed after it): many requests in a row must not pile up idle
// connections against the daemon's per-peer cap.
func socketTransport(socket string) *http.Transport {
	return &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}
}

// registerRaw registers a worker holding adder through the API and
// returns its token.
func registerRaw(t *testing.T, td *testDaemon, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	writeFile(t, path, "name: "+name+"\ntools: [adder]\n")
	added, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	return added.Token
}

func withToken(c *api.Client, token string) *api.Client {
	cc := *c
	cc.Token = token
	return &cc
}

func TestAuthentication(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	create(t, c, jsTool)
	tok := registerRaw(t, td, "helper")

	// A worker token is its worker's agent: llm, worker:NAME, the worker.
	agent := withToken(c, tok)
	agent.Session = "s-1"
	var h api.Health
	if err := agent.Do(context.Background(), "GET", "/v1/health", nil, &h); err != nil {
		t.Fatalf("token caller refused: %v", err)
	}
	// The daemon's host paths are a person's to see.
	if h.Status != "ok" || h.Socket != "" || h.DataDir != "" {
		t.Fatalf("health for an agent: %+v", h)
	}
	if err := c.Do(context.Background(), "GET", "/v1/health", nil, &h); err != nil || h.Socket == "" || h.DataDir == "" {
		t.Fatalf("health for a person: %+v %v", h, err)
	}

	tests := []struct {
		name   string
		hdr    http.Header
		path   string
		code   errdefs.Code
		status int
	}{
		{"bad token", http.Header{"Authorization": {"Bearer tcw_" + strings.Repeat("a", 52)}}, "/v1/health", errdefs.Unauthorized, 401},
		{"malformed token", http.Header{"Authorization": {"Bearer nope"}}, "/v1/health", errdefs.Unauthorized, 401},
		{"not bearer", http.Header{"Authorization": {"Basic " + tok}}, "/v1/health", errdefs.Unauthorized, 401},
		{"elevation by header", http.Header{"Authorization": {"Bearer " + tok}, "Toolcage-Caller-Type": {"user"}}, "/v1/health", errdefs.Forbidden, 403},
		{"token with a caller id", http.Header{"Authorization": {"Bearer " + tok}, "Toolcage-Caller-Id": {"alice"}}, "/v1/health", errdefs.Forbidden, 403},
		{"token naming another worker", http.Header{"Authorization": {"Bearer " + tok}, "Toolcage-Worker": {"other"}}, "/v1/health", errdefs.Forbidden, 403},
		{"bad session", http.Header{"Toolcage-Session": {"a b"}}, "/v1/health", errdefs.InvalidRequest, 400},
		{"long session", http.Header{"Toolcage-Session": {strings.Repeat("a", 65)}}, "/v1/health", errdefs.InvalidRequest, 400},
		{"repeated caller type", http.Header{"Toolcage-Caller-Type": {"user", "llm"}}, "/v1/health", errdefs.InvalidRequest, 400},
		{"repeated caller type, llm first", http.Header{"Toolcage-Caller-Type": {"llm", "user"}}, "/v1/health", errdefs.InvalidRequest, 400},
		{"repeated worker", http.Header{"Toolcage-Worker": {"a", "b"}}, "/v1/health", errdefs.InvalidRequest, 400},
		{"repeated profile", http.Header{"Toolcage-Profile": {"a", "a"}}, "/v1/health", errdefs.InvalidRequest, 400},
		{"repeated authorization", http.Header{"Authorization": {"Bearer " + tok, "Bearer " + tok}}, "/v1/health", errdefs.InvalidRequest, 400},
		{"repeated session", http.Header{"Toolcage-Session": {"a", "b"}}, "/v1/health", errdefs.InvalidRequest, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, e := rawDo(t, td.cfg.Socket, "GET", tt.path, tt.hdr, "")
			if status != tt.status || e.Code != tt.code || e.Message == "" {
				t.Fatalf("got %d %s %q, want %d %s", status, e.Code, e.Message, tt.status, tt.code)
			}
		})
	}

	// The audit record names the principal: a token's call and a person's.
	if _, err := callTool(agent, "adder", map[string]any{"a": 1, "b": 2}); err != nil {
		t.Fatalf("token call: %v", err)
	}
	if _, err := callTool(c, "adder", map[string]any{"a": 1, "b": 2}); err != nil {
		t.Fatalf("person call: %v", err)
	}
	var ex api.ExecutionList
	if err := c.Do(context.Background(), "GET", "/v1/executions?tool=adder", nil, &ex); err != nil || len(ex.Executions) != 2 {
		t.Fatalf("executions: %v %+v", err, ex)
	}
	person, byToken := ex.Executions[0], ex.Executions[1]
	if byToken.CallerType != "llm" || byToken.CallerID != "worker:helper" || byToken.Worker != "helper" {
		t.Errorf("token call recorded as %+v", byToken)
	}
	if person.CallerType != "user" || !strings.HasPrefix(person.CallerID, "uid:") || person.Worker != "" {
		t.Errorf("person call recorded as %+v", person)
	}

	// A person narrowing to a registered worker is that worker's agent.
	as := *c
	as.Worker = "helper"
	if _, err := callTool(&as, "adder", map[string]any{"a": 1, "b": 2}); err != nil {
		t.Fatalf("narrowed call: %v", err)
	}
	if err := c.Do(context.Background(), "GET", "/v1/executions?tool=adder&limit=1", nil, &ex); err != nil {
		t.Fatal(err)
	}
	if e := ex.Executions[0]; e.CallerType != "llm" || e.Worker != "helper" {
		t.Errorf("narrowed call recorded as %+v", e)
	}

	// A token that reaches a tool's output or the audit log is redacted.
	create(t, c, `{"name":"echo_s","description":"d","kind":"js","js":{"code":"return 'got ' + args.s"}}`)
	r, err := callTool(c, "echo_s", map[string]any{"s": tok})
	if err != nil || strings.Contains(string(r.Result), tok) || !strings.Contains(string(r.Result), "[REDACTED:toolcage-worker-token]") {
		t.Fatalf("token in a result: %v %s", err, r.Result)
	}
	if err := c.Do(context.Background(), "GET", "/v1/executions?tool=echo_s", nil, &ex); err != nil || len(ex.Executions) != 1 ||
		strings.Contains(string(ex.Executions[0].Arguments), tok) {
		t.Fatalf("token in the audit log: %v %+v", err, ex)
	}

	// A rotated token's predecessor and a revoked token are refused.
	newTok, _, err := td.d.store.RotateWorkerToken(context.Background(), "helper")
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.Do(context.Background(), "GET", "/v1/health", nil, nil); codeOf(err) != errdefs.Unauthorized {
		t.Fatalf("old token after rotation: %v", err)
	}
	if err := withToken(c, newTok).Do(context.Background(), "GET", "/v1/health", nil, nil); err != nil {
		t.Fatalf("new token: %v", err)
	}
	if _, err := td.d.store.RevokeWorkerTokens(context.Background(), "helper"); err != nil {
		t.Fatal(err)
	}
	if err := withToken(c, newTok).Do(context.Background(), "GET", "/v1/health", nil, nil); codeOf(err) != errdefs.Unauthorized {
		t.Fatalf("revoked token: %v", err)
	}
}
