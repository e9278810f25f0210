package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/store"
)

func asWorker(c *api.Client, worker string) *api.Client {
	cc := *llm(c)
	cc.Worker = worker
	return &cc
}

// TestAgentMadeTools drives the rules for tools an agent makes through the
// API of a real daemon: a few cells of the pending matrix, the worker's
// secret grant, the ask default and the confirmed delete.
func TestAgentMadeTools(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	// A registered worker granting api_token (as its worker file would).
	def, _ := json.Marshal(map[string]any{"name": "helper", "path": "/w/helper.yaml", "secrets": []string{"api_token"}})
	if _, _, err := td.d.store.RegisterWorker(ctx, &store.Worker{Name: "helper", Path: "/w/helper.yaml", Definition: def}); err != nil {
		t.Fatal(err)
	}
	helper := asWorker(c, "helper")

	cells := []struct {
		name, def string
		client    *api.Client
		status    string
	}{
		{"llm bare js", "name: c1\ndescription: d\nkind: js\njs: {code: return 1}\n", llm(c), "active"},
		{"llm shell, no permissions", "name: c2\ndescription: d\nkind: shell\nshell: {command: \"echo hi\"}\n", llm(c), "pending_approval"},
		{"llm js with a granted secret", "name: c3\ndescription: d\nkind: js\nsecrets: [api_token]\njs: {code: return 1}\n", helper, "pending_approval"},
		{"llm js with a harmless permission", "name: c4\ndescription: d\nkind: js\npermissions: [database]\njs: {code: return 1}\n", llm(c), "pending_approval"},
		{"person shell", "name: c5\ndescription: d\nkind: shell\nshell: {command: \"echo hi\"}\n", c, "active"},
	}
	for _, tt := range cells {
		t.Run(tt.name, func(t *testing.T) {
			var got api.Tool
			if err := tt.client.Do(ctx, "POST", "/v1/tools", []byte(tt.def), &got); err != nil || got.Status != tt.status {
				t.Fatalf("create: %v status %q, want %q", err, got.Status, tt.status)
			}
		})
	}
	// The pending shell tool does not run until a person approves it.
	if _, err := callTool(llm(c), "c2", nil); codeOf(err) != errdefs.ToolNotActive {
		t.Fatalf("call pending shell tool: %v", err)
	}

	// Secrets outside the grant are refused on create, PUT and PATCH.
	outside := "name: s1\ndescription: d\nkind: js\nsecrets: [db_password]\njs: {code: return 1}\n"
	for _, cl := range []*api.Client{helper, llm(c)} {
		err := cl.Do(ctx, "POST", "/v1/tools", []byte(outside), nil)
		if ae := apiErr(t, err); ae.Code != errdefs.Forbidden || !strings.Contains(ae.Message, "db_password") {
			t.Fatalf("secret outside the grant (worker %q): %+v", cl.Worker, ae)
		}
	}
	if err := helper.Do(ctx, "PUT", "/v1/tools/c1", []byte(strings.Replace(outside, "name: s1", "name: c1", 1)), nil); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("PUT outside the grant: %v", err)
	}
	if err := helper.Do(ctx, "PATCH", "/v1/tools/c1", []byte(`{"secrets":["db_password"]}`), nil); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("PATCH outside the grant: %v", err)
	}

	// An agent's tool with no approval written asks for each call.
	var got api.Tool
	if err := c.Do(ctx, "GET", "/v1/tools/c1", nil, &got); err != nil || !got.ApprovalDefault || !strings.Contains(string(got.Definition), `"approval":"ask"`) {
		t.Fatalf("agent tool approval: %v %+v %s", err, got, got.Definition)
	}
	if _, err := callTool(noWait(llm(c)), "c1", nil); codeOf(err) != errdefs.ApprovalRequired {
		t.Fatalf("call of an agent's tool without a person: %v", err)
	}
	// A patch leaves the unwritten approval unwritten.
	if err := llm(c).Do(ctx, "PATCH", "/v1/tools/c1", []byte(`{"description":"changed"}`), &got); err != nil || !got.ApprovalDefault || got.Version != 2 {
		t.Fatalf("patch: %v %+v", err, got)
	}
	// A person's tool still runs with no one asked.
	if err := c.Do(ctx, "GET", "/v1/tools/c5", nil, &got); err != nil || !got.ApprovalDefault || !strings.Contains(string(got.Definition), `"approval":"preApproved"`) {
		t.Fatalf("person tool approval: %v %s", err, got.Definition)
	}

	// An agent's change of an approved tool goes back to pending, and the
	// last approved version is kept for the person reading it.
	if err := c.Do(ctx, "POST", "/v1/tools/c3/approve", nil, &got); err != nil || got.ApprovedVersion != 1 {
		t.Fatalf("approve: %v %+v", err, got)
	}
	if err := helper.Do(ctx, "PATCH", "/v1/tools/c3", []byte(`{"js":{"code":"return 2"}}`), &got); err != nil || got.Status != "pending_approval" || got.Version != 2 || got.ApprovedVersion != 1 {
		t.Fatalf("agent change: %v %+v", err, got)
	}

	// Delete: an agent confirms, a person need not.
	err := llm(c).Do(ctx, "DELETE", "/v1/tools/c1", nil, nil)
	if ae := apiErr(t, err); ae.Code != errdefs.InvalidRequest || !strings.Contains(ae.Message, "confirm") {
		t.Fatalf("unconfirmed llm delete: %+v", ae)
	}
	if err := llm(c).Do(ctx, "DELETE", "/v1/tools/c1?confirm=maybe", nil, nil); codeOf(err) != errdefs.InvalidRequest {
		t.Fatalf("bad confirm: %v", err)
	}
	if err := llm(c).Do(ctx, "DELETE", "/v1/tools/c1?confirm=true", nil, nil); err != nil {
		t.Fatalf("confirmed llm delete: %v", err)
	}
	if err := c.Do(ctx, "DELETE", "/v1/tools/c5", nil, nil); err != nil {
		t.Fatalf("person delete: %v", err)
	}
}

func TestAgentsAlwaysPending(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.Agents.AlwaysPending = true })
	var got api.Tool
	if err := llm(td.client).Do(context.Background(), "POST", "/v1/tools", []byte("name: c1\ndescription: d\nkind: js\njs: {code: return 1}\n"), &got); err != nil || got.Status != "pending_approval" {
		t.Fatalf("always pending: %v %+v", err, got)
	}
}

func TestAgentsConfigValidated(t *testing.T) {
	if _, err := LoadConfig("", map[string]any{"agents.always_pending": "sometimes"}); err == nil {
		t.Fatal("agents.always_pending: sometimes accepted")
	}
	c, err := LoadConfig("", nil)
	if err != nil || c.Agents.AlwaysPending {
		t.Fatalf("default: %v %+v", err, c.Agents)
	}
}
