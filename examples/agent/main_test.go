package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/internal/testutil"
)

// The example runs as docs/agents.md says, against a real daemon, with this
// test as the person: it approves the tool the agent made, then the call.
func TestAgentExample(t *testing.T) {
	exe, err := testutil.Executor(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "tc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "d.sock")
	cfg, err := daemon.LoadConfig("", map[string]any{"socket": sock, "data_dir": t.TempDir(),
		"executor.path": exe, "shutdown_timeout": "10s", "mcp.progress_interval": "100ms"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx) }()
	defer func() { cancel(); <-done; d.Close() }()

	person := api.NewClient(sock)
	def, err := os.ReadFile(filepath.Join("..", "tools", "word_frequency.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := person.Do(ctx, "POST", "/v1/tools", def, nil); err != nil {
		t.Fatal(err)
	}
	wfile, _ := filepath.Abs("worker.yaml")
	var added api.WorkerToken
	if err := person.Do(ctx, "POST", "/v1/workers", api.WorkerAddRequest{Path: wfile}, &added); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "agent_demo.token")
	if err := os.WriteFile(tokenFile, []byte(added.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The person: approve the tool once it is pending, then the call.
	go func() {
		for ctx.Err() == nil {
			var tool api.Tool
			if person.Do(ctx, "GET", "/v1/tools/shout", nil, &tool) == nil && tool.Status == "pending_approval" {
				person.Do(ctx, "POST", "/v1/tools/shout/approve", nil, nil)
			}
			var l api.ApprovalList
			if person.Do(ctx, "GET", "/v1/approvals?status=pending", nil, &l) == nil && len(l.Approvals) > 0 {
				person.Do(ctx, "POST", "/v1/approvals/"+l.Approvals[0].ID+"/allow", map[string]any{}, nil)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	var out testutil.SyncBuffer
	if err := run([]string{"--worker", "agent_demo", "--socket", sock, "--token-file", tokenFile, "--wait", "60s"}, &out); err != nil {
		t.Fatalf("agent: %v\n%s", err, out.String())
	}
	for _, want := range []string{"1. tools/list\n   create_tool, ", ", word_frequency\n", `"the"`, "shout is pending_approval",
		"\n   toolcage tools approve shout\n", "approved: shout is listed", "… tool shout waits for a person's approval", "(toolcage approvals allow ", "→ ", "MADE BY AN AGENT"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("the agent printed:\n%s", out.String())
	// The tool was made over MCP, by the create_tool meta-tool, as the
	// worker's agent.
	var made api.Tool
	if err := person.Do(ctx, "GET", "/v1/tools/shout", nil, &made); err != nil || made.CreatedBy != "llm" || made.Status != "active" {
		t.Fatalf("shout: %+v %v", made, err)
	}
	var es api.ExecutionList
	if err := person.Do(ctx, "GET", "/v1/executions?tool=create_tool", nil, &es); err != nil {
		t.Fatal(err)
	}
	if len(es.Executions) != 1 || es.Executions[0].CallerID != "worker:agent_demo" || es.Executions[0].Session != "example-agent" {
		t.Fatalf("create_tool's audit: %+v", es.Executions)
	}

	// Run again: shout exists and is listed, so there is nothing to wait for.
	var again testutil.SyncBuffer
	go approveCalls(ctx, person)
	if err := run([]string{"--worker", "agent_demo", "--socket", sock, "--token-file", tokenFile, "--wait", "60s"}, &again); err != nil {
		t.Fatalf("agent, again: %v\n%s", err, again.String())
	}
	if s := again.String(); !strings.Contains(s, "shout exists already") || strings.Contains(s, "4. wait") || !strings.Contains(s, "MADE BY AN AGENT") {
		t.Errorf("second run:\n%s", s)
	}
}

// approveCalls allows the first call that waits for a person.
func approveCalls(ctx context.Context, person *api.Client) {
	for ctx.Err() == nil {
		var l api.ApprovalList
		if person.Do(ctx, "GET", "/v1/approvals?status=pending", nil, &l) == nil && len(l.Approvals) > 0 {
			person.Do(ctx, "POST", "/v1/approvals/"+l.Approvals[0].ID+"/allow", map[string]any{}, nil)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
