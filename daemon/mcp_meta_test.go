package daemon

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcage/toolcage/daemon/catalog"
)

// openMCPAs opens an MCP session of worker with token over transport
// ("socket" or "http").
func openMCPAs(t *testing.T, td *testDaemon, transport, worker, token string) (*sdk.ClientSession, *mcpEvents) {
	t.Helper()
	var tr sdk.Transport
	switch transport {
	case "socket":
		conn, err := withToken(td.client, token).MCPConn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		tr = &sdk.IOTransport{Reader: conn, Writer: conn}
	case "http":
		tr = &sdk.StreamableClientTransport{Endpoint: "http://" + td.d.MCPAddr() + "/mcp/" + worker,
			HTTPClient: bearerClient(token), MaxRetries: -1}
	default:
		t.Fatalf("no transport %q", transport)
	}
	return connectMCP(t, tr)
}

// A worker with meta_tools offers them over MCP, and a tool its agent
// makes with create_tool starts pending, off the list, until a person
// approves it: then list_changed goes out and the tool can be called.
func TestMCPMetaTools(t *testing.T) {
	for _, transport := range []string{"socket", "http"} {
		t.Run(transport, func(t *testing.T) {
			td := startDaemon(t, "", func(c *Config) { c.MCP.Listen = "127.0.0.1:0" })
			person := td.client
			create(t, person, jsTool)
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "maker.yaml"), "name: maker\ntools: [adder]\napproval: {default: preApproved}\nagent_tools: {create: true, meta_tools: true}\n")
			writeFile(t, filepath.Join(dir, "reader.yaml"), "name: reader\ntools: [adder]\nagent_tools: {meta_tools: true}\n")
			maker, err := addWorker(person, filepath.Join(dir, "maker.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			reader, err := addWorker(person, filepath.Join(dir, "reader.yaml"))
			if err != nil {
				t.Fatal(err)
			}

			// Without agent_tools.create, only the meta-tools that read.
			rs, _ := openMCPAs(t, td, transport, "reader", reader.Token)
			if names, _ := listNamesMCP(t, rs); !slices.Equal(names, []string{"adder", "get_tool", "list_custom_tools", "search_tools"}) {
				t.Errorf("reader's tools/list: %v", names)
			}

			cs, ev := openMCPAs(t, td, transport, "maker", maker.Token)
			names, tools := listNamesMCP(t, cs)
			want := append([]string{"adder"}, catalog.MetaToolNames...)
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("maker's tools/list: %v, want %v", names, want)
			}
			for tool, hints := range map[string][2]bool{"list_custom_tools": {true, false}, "get_tool": {true, false},
				"create_tool": {false, false}, "delete_custom_tool": {false, true}} {
				a := tools[tool].Annotations
				if a == nil || a.ReadOnlyHint != hints[0] || a.DestructiveHint == nil || *a.DestructiveHint != hints[1] {
					t.Errorf("%s annotations %+v, want readOnly/destructive %v", tool, a, hints)
				}
			}
			if s, _ := json.Marshal(tools["create_tool"].InputSchema); !strings.Contains(string(s), `"required":["name","description"]`) {
				t.Errorf("create_tool's input schema: %s", s)
			}

			// create_tool: a shell tool starts pending, and says who decides.
			drain(ev.listChanged)
			r := callMCP(t, cs, "create_tool", map[string]any{"name": "shout", "description": "Upper-case a text", "kind": "shell",
				"parameters": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}},
				"shell":      map[string]any{"command": "echo {{.text}}"}})
			var made struct {
				Status  string `json:"status"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal(structured[mcpCallInfo](t, r).Result, &made); r.IsError || err != nil ||
				made.Status != catalog.StatusPendingApproval || !strings.Contains(made.Message, "toolcage tools approve shout") {
				t.Fatalf("create_tool: %+v %s", r, resultText(r))
			}
			var shown struct {
				Status    string `json:"status"`
				CreatedBy string `json:"created_by"`
			}
			if err := person.Do(context.Background(), "GET", "/v1/tools/shout", nil, &shown); err != nil ||
				shown.Status != catalog.StatusPendingApproval || shown.CreatedBy != catalog.CreatedByLLM {
				t.Fatalf("shout as the person sees it: %+v %v", shown, err)
			}
			// Pending: not listed, not callable, no list_changed.
			select {
			case <-ev.listChanged:
				t.Fatal("list_changed for a pending tool the agent cannot call")
			case <-time.After(300 * time.Millisecond):
			}
			if names, _ := listNamesMCP(t, cs); slices.Contains(names, "shout") {
				t.Fatalf("a pending tool is listed: %v", names)
			}
			if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "shout", Arguments: map[string]any{"text": "x"}}); err == nil {
				t.Fatal("a pending tool was called")
			}
			// The agent sees it among its own, pending.
			r = callMCP(t, cs, "list_custom_tools", map[string]any{"status": catalog.StatusPendingApproval})
			if r.IsError || !strings.Contains(resultText(r), `"name":"shout"`) {
				t.Fatalf("list_custom_tools: %s", resultText(r))
			}

			// The person approves: list_changed, listed, callable.
			if err := person.Do(context.Background(), "POST", "/v1/tools/shout/approve", nil, nil); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ev.listChanged:
			case <-time.After(10 * time.Second):
				t.Fatal("no notifications/tools/list_changed after the tool was approved")
			}
			if names, _ := listNamesMCP(t, cs); !slices.Contains(names, "shout") {
				t.Fatalf("approved tool not listed: %v", names)
			}
			r = callMCP(t, cs, "shout", map[string]any{"text": "made over mcp"})
			var sh shellResult
			if err := json.Unmarshal(structured[mcpCallInfo](t, r).Result, &sh); r.IsError || err != nil || sh.Stdout != "made over mcp\n" {
				t.Fatalf("shout: %+v %s", r, resultText(r))
			}
			// The other worker never got it.
			if names, _ := listNamesMCP(t, rs); slices.Contains(names, "shout") {
				t.Errorf("reader lists maker's tool: %v", names)
			}
		})
	}
}
