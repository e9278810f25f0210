package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// The MCP server, end to end with the SDK's own client: a real daemon
// (SQLite, sandboxed executors), a worker registered from a file, and both
// transports: the socket upgrade `toolcage mcp` relays (cmd/toolcage tests
// run the built binary over a stdio pipe) and streamable HTTP on
// mcp.listen.

const mcpWorker = `name: mw
description: the MCP test worker
tools: [adder, asker, echo_it, list_dir, weather, not_callable]
approval: {default: preApproved, tools: {asker: ask}}
agent_tools: {create: true}
`

// mcpFixture is a daemon serving worker mw over MCP.
type mcpFixture struct {
	td      *testDaemon
	token   string
	tokenID string
	hits    atomic.Int32
}

func newMCPFixture(t *testing.T) *mcpFixture {
	t.Helper()
	f := &mcpFixture{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"city":%q,"temp_c":21.5}`, strings.TrimPrefix(r.URL.Path, "/forecast/"))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	f.td = startDaemon(t, "", func(c *Config) {
		c.HTTP.AllowPrivateHosts = []string{"localhost"}
		c.MCP.Listen = "127.0.0.1:0"
		c.MCP.ProgressInterval = 50 * time.Millisecond
	})
	c := f.td.client
	create(t, c, jsTool)
	create(t, c, `{"name":"asker","description":"asks each time","kind":"js","approval":"ask",
		"parameters":{"type":"object","properties":{"n":{"type":"integer"}}},"js":{"code":"return args.n * 2"}}`)
	create(t, c, `{"name":"echo_it","description":"echo","kind":"shell",
		"parameters":{"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]},
		"shell":{"command":"echo {{.msg}}"}}`)
	create(t, c, `{"name":"list_dir","description":"ls","kind":"shell",
		"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},
		"shell":{"command":"ls {{.path}}"}}`)
	create(t, c, `{"name":"weather","description":"forecast","kind":"http","http":{"method":"GET",
		"url":"http://localhost:`+u.Port()+`/forecast/{{city}}","allowed_domains":["localhost"]}}`)
	create(t, c, `{"name":"not_callable","description":"blocked","kind":"js","approval":"blocked","js":{"code":"return 1"}}`)
	path := filepath.Join(t.TempDir(), "mw.yaml")
	writeFile(t, path, mcpWorker)
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	f.token, f.tokenID = added.Token, added.TokenID
	return f
}

// mcpTransports open a session of worker mw with token.
var mcpTransports = map[string]func(t *testing.T, f *mcpFixture, token string) (sdk.Transport, error){
	"socket": func(t *testing.T, f *mcpFixture, token string) (sdk.Transport, error) {
		conn, err := withToken(f.td.client, token).MCPConn(context.Background())
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { conn.Close() })
		return &sdk.IOTransport{Reader: conn, Writer: conn}, nil
	},
	"http": func(t *testing.T, f *mcpFixture, token string) (sdk.Transport, error) {
		return &sdk.StreamableClientTransport{Endpoint: "http://" + f.td.d.MCPAddr() + "/mcp/mw",
			HTTPClient: bearerClient(token), MaxRetries: -1}, nil
	},
}

// bearerClient sends Authorization: Bearer token with every request.
func bearerClient(token string) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// mcpEvents is what a test client heard from the server.
type mcpEvents struct {
	listChanged chan struct{}
	progress    chan *sdk.ProgressNotificationParams
}

func connectMCP(t *testing.T, tr sdk.Transport) (*sdk.ClientSession, *mcpEvents) {
	t.Helper()
	ev := &mcpEvents{listChanged: make(chan struct{}, 16), progress: make(chan *sdk.ProgressNotificationParams, 64)}
	cl := sdk.NewClient(&sdk.Implementation{Name: "toolcage-test", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { offer(ev.listChanged, struct{}{}) },
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			offer(ev.progress, r.Params)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := cl.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ev
}

func callMCP(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return r
}

// structured decodes a result's structured content.
func structured[T any](t *testing.T, r *sdk.CallToolResult) T {
	t.Helper()
	var v T
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return v
}

func resultText(r *sdk.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

type mcpCallInfo struct {
	Result json.RawMessage `json:"result"`
	CallID string          `json:"call_id"`
	Error  *struct {
		Code       string `json:"code"`
		Message    string `json:"message"`
		ApprovalID string `json:"approval_id"`
	} `json:"error"`
}

func listNamesMCP(t *testing.T, cs *sdk.ClientSession) ([]string, map[string]*sdk.Tool) {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		byName[tool.Name] = tool
	}
	slices.Sort(names)
	return names, byName
}

func TestMCP(t *testing.T) {
	for name, open := range mcpTransports {
		t.Run(name, func(t *testing.T) {
			f := newMCPFixture(t)
			person := f.td.client
			tr, err := open(t, f, f.token)
			if err != nil {
				t.Fatal(err)
			}
			cs, ev := connectMCP(t, tr)

			// The worker's callable tools, with their schemas and hints.
			names, tools := listNamesMCP(t, cs)
			if want := []string{"adder", "asker", "echo_it", "list_dir", "weather"}; !slices.Equal(names, want) {
				t.Fatalf("tools/list: %v, want %v (the blocked tool left out)", names, want)
			}
			if s, _ := json.Marshal(tools["echo_it"].InputSchema); !strings.Contains(string(s), `"required":["msg"]`) {
				t.Errorf("echo_it's input schema: %s", s)
			}
			for tool, want := range map[string][3]bool{"adder": {true, false, false}, "echo_it": {false, true, false}, "weather": {true, false, true}} {
				a := tools[tool].Annotations
				if a == nil || a.ReadOnlyHint != want[0] || *a.DestructiveHint != want[1] || *a.OpenWorldHint != want[2] {
					t.Errorf("%s annotations %+v, want readOnly/destructive/openWorld %v", tool, a, want)
				}
			}

			// One call of each kind.
			r := callMCP(t, cs, "adder", map[string]any{"a": 2, "b": 3})
			if r.IsError || resultText(r) != "5" || string(structured[mcpCallInfo](t, r).Result) != "5" {
				t.Fatalf("adder: %+v %s", r, resultText(r))
			}
			r = callMCP(t, cs, "echo_it", map[string]any{"msg": "hi there"})
			var sh shellResult
			if err := json.Unmarshal(structured[mcpCallInfo](t, r).Result, &sh); r.IsError || err != nil || sh.Stdout != "hi there\n" {
				t.Fatalf("echo_it: %+v %s", r, resultText(r))
			}
			before := f.hits.Load()
			r = callMCP(t, cs, "weather", map[string]any{"city": "Paris"})
			if r.IsError || !strings.Contains(resultText(r), `"city":"Paris"`) || f.hits.Load() != before+1 {
				t.Fatalf("weather: %+v %s", r, resultText(r))
			}

			// A policy refusal is a tool result: isError, code and message.
			r = callMCP(t, cs, "list_dir", map[string]any{"path": "--help"})
			if info := structured[mcpCallInfo](t, r); !r.IsError || info.Error == nil || info.Error.Code != string(errdefs.PolicyDenied) ||
				!strings.HasPrefix(resultText(r), "policy_denied: ") {
				t.Fatalf("refused call: %+v %s", r, resultText(r))
			}
			r = callMCP(t, cs, "adder", map[string]any{"a": "two"})
			if info := structured[mcpCallInfo](t, r); !r.IsError || info.Error == nil || info.Error.Code != string(errdefs.InvalidArguments) {
				t.Fatalf("bad arguments: %+v %s", r, resultText(r))
			}
			// A tool the worker does not serve (blocked) is no tool at
			// all: a protocol error, as MCP has it for unknown tools.
			if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "not_callable"}); err == nil || !strings.Contains(err.Error(), "not_callable") {
				t.Fatalf("a tool not served: %v", err)
			}

			// Calls are the worker's agent's, with its token, in the audit.
			var es api.ExecutionList
			if err := person.Do(context.Background(), "GET", "/v1/executions?tool=adder", nil, &es); err != nil {
				t.Fatal(err)
			}
			if len(es.Executions) != 2 || es.Executions[0].CallerType != "llm" || es.Executions[0].CallerID != "worker:mw" ||
				es.Executions[0].TokenID != f.tokenID || !strings.HasPrefix(es.Executions[0].Session, "mcp-") {
				t.Fatalf("audit: %+v", es.Executions)
			}

			// An approval wait stays open with progress until a person decides.
			for _, allow := range []bool{true, false} {
				drain(ev.progress) // the last wait's, if any
				decided := make(chan error, 1)
				go func() { decided <- decideWhenPending(person, ev, allow) }()
				params := &sdk.CallToolParams{Name: "asker", Arguments: map[string]any{"n": 21}}
				params.SetProgressToken("wait-1")
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				r, err := cs.CallTool(ctx, params)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if err := <-decided; err != nil {
					t.Fatal(err)
				}
				info := structured[mcpCallInfo](t, r)
				if allow && (r.IsError || resultText(r) != "42") {
					t.Fatalf("allowed call: %+v %s", r, resultText(r))
				}
				if !allow && (!r.IsError || info.Error == nil || info.Error.Code != string(errdefs.ApprovalDenied) || info.Error.ApprovalID == "") {
					t.Fatalf("denied call: %+v %s", r, resultText(r))
				}
			}

			// list_changed: the agent makes a tool (pending: it asks for
			// a permission), the list does not change until a person approves it.
			drain(ev.listChanged)
			agent := withToken(person, f.token)
			if err := agent.Do(context.Background(), "POST", "/v1/tools", []byte(`{"name":"fresh","description":"new","kind":"js",
				"permissions":["database"],"js":{"code":"return 'fresh'"}}`), nil); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ev.listChanged:
				t.Fatal("list_changed for a pending tool the agent cannot call")
			case <-time.After(300 * time.Millisecond):
			}
			if err := person.Do(context.Background(), "POST", "/v1/tools/fresh/approve", nil, nil); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ev.listChanged:
			case <-time.After(10 * time.Second):
				t.Fatal("no notifications/tools/list_changed after the tool was approved")
			}
			if names, _ := listNamesMCP(t, cs); !slices.Contains(names, "fresh") {
				t.Fatalf("approved tool not listed: %v", names)
			}
			if r := callMCP(t, cs, "fresh", nil); r.IsError || resultText(r) != "fresh" {
				t.Fatalf("fresh: %+v %s", r, resultText(r))
			}
			// Disabling it takes it off the list again.
			if err := person.Do(context.Background(), "POST", "/v1/tools/fresh/disable", nil, nil); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "fresh off the list", func() bool { n, _ := listNamesMCP(t, cs); return !slices.Contains(n, "fresh") })

			// A wrong token opens nothing.
			if _, err := connectMCPErr(open, t, f, "tcw_"+strings.Repeat("a", 52)); err == nil {
				t.Fatal("a wrong token opened a session")
			}

			// Revoked: the open session's calls are refused, and no new
			// session opens.
			if err := person.Do(context.Background(), "DELETE", "/v1/workers/mw/token", nil, nil); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			r, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "adder", Arguments: map[string]any{"a": 1, "b": 1}})
			cancel()
			switch {
			case err != nil && name == "http": // each HTTP request carries the token: 401
			case err == nil && r.IsError && structured[mcpCallInfo](t, r).Error.Code == string(errdefs.Unauthorized):
			default:
				t.Fatalf("call after revoke: %+v %v", r, err)
			}
			if _, err := connectMCPErr(open, t, f, f.token); err == nil {
				t.Fatal("a revoked token opened a session")
			}
		})
	}
}

// connectMCPErr opens a session and reports why it could not.
func connectMCPErr(open func(*testing.T, *mcpFixture, string) (sdk.Transport, error), t *testing.T, f *mcpFixture, token string) (*sdk.ClientSession, error) {
	tr, err := open(t, f, token)
	if err != nil {
		return nil, err
	}
	cl := sdk.NewClient(&sdk.Implementation{Name: "toolcage-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := cl.Connect(ctx, tr, nil)
	if err == nil {
		cs.Close()
	}
	return cs, err
}

// decideWhenPending waits for the call to park and to send progress, then
// allows or denies its approval as the person.
func decideWhenPending(person *api.Client, ev *mcpEvents, allow bool) error {
	deadline := time.Now().Add(20 * time.Second)
	var id string
	for id == "" {
		if time.Now().After(deadline) {
			return errors.New("no pending approval appeared")
		}
		var l api.ApprovalList
		if err := person.Do(context.Background(), "GET", "/v1/approvals?status=pending", nil, &l); err != nil {
			return err
		}
		if len(l.Approvals) > 0 {
			id = l.Approvals[0].ID
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Two notifications: the first at once, then one after an interval.
	for i := range 2 {
		select {
		case p := <-ev.progress:
			if p.ProgressToken != "wait-1" || !strings.Contains(p.Message, "toolcage approvals allow "+id) {
				return fmt.Errorf("progress %+v", p)
			}
		case <-time.After(10 * time.Second):
			return fmt.Errorf("progress notification %d never came", i+1)
		}
	}
	verb := "deny"
	if allow {
		verb = "allow"
	}
	return person.Do(context.Background(), "POST", "/v1/approvals/"+id+"/"+verb, map[string]any{}, nil)
}

// offer hands v to a test's channel without blocking: a client's
// notification handler that blocks holds up its whole session (and its
// Close), and a slow machine sends many progress notifications.
func offer[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
	}
}

func drain[T any](ch chan T) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// The HTTP endpoint answers 401 to a request without the endpoint's
// worker token, whatever else it holds.
func TestMCPHTTPUnauthorized(t *testing.T) {
	f := newMCPFixture(t)
	other := registerRaw(t, f.td, "other")
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		name, path, auth string
		want             int
	}{
		{"no token", "/mcp/mw", "", 401},
		{"not bearer", "/mcp/mw", "Basic " + f.token, 401},
		{"wrong token", "/mcp/mw", "Bearer tcw_" + strings.Repeat("b", 52), 401},
		{"another worker's token", "/mcp/mw", "Bearer " + other, 401},
		{"unknown worker", "/mcp/ghost", "Bearer " + f.token, 401},
		{"right token", "/mcp/mw", "Bearer " + f.token, 200},
	} {
		req, _ := http.NewRequest("POST", "http://"+f.td.d.MCPAddr()+tc.path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}

// The socket's MCP route takes only a worker token and an upgrade.
func TestMCPSocketRefusals(t *testing.T) {
	f := newMCPFixture(t)
	if _, err := f.td.client.MCPConn(context.Background()); codeOf(err) != errdefs.Unauthorized {
		t.Fatalf("a person's MCP session: %v", err)
	}
	if _, err := withToken(f.td.client, "tcw_"+strings.Repeat("c", 52)).MCPConn(context.Background()); codeOf(err) != errdefs.Unauthorized {
		t.Fatalf("a wrong token: %v", err)
	}
	agent := withToken(f.td.client, f.token)
	agent.Worker = "someone_else"
	if _, err := agent.MCPConn(context.Background()); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("a token naming another worker: %v", err)
	}
	// Without the upgrade, it is a bad request.
	if err := withToken(f.td.client, f.token).Do(context.Background(), "GET", "/v1/mcp", nil, nil); codeOf(err) != errdefs.InvalidRequest {
		t.Fatalf("no upgrade: %v", err)
	}
}

func TestMCPListenMustBeLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{"": true, "127.0.0.1:8765": true, "[::1]:0": true,
		"0.0.0.0:8765": false, "localhost:8765": false, "192.168.1.2:80": false, "127.0.0.1": false} {
		_, err := LoadConfig("", map[string]any{"mcp.listen": addr})
		if (err == nil) != ok || err != nil && !strings.Contains(err.Error(), "mcp.listen") {
			t.Errorf("mcp.listen %q: %v, want ok %v", addr, err, ok)
		}
	}
}
