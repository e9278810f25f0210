package main

import (
	"strings"
	"testing"
)

const agentJS = `name: counter
description: counts
kind: js
js:
  code: return 1
`

// TestToolsShowPendingChange: a person reading a pending agent's tool sees
// its whole definition and the diff against the version they approved.
func TestToolsShowPendingChange(t *testing.T) {
	sock := startDaemon(t)
	asLLM := []string{"--caller-type", "llm"}
	// A js tool with a permission starts pending: never approved.
	withPerm := strings.Replace(agentJS, "kind: js", "kind: js\npermissions: [database]", 1)
	if tool := createTool(t, sock, withPerm, asLLM...); tool.Status != "pending_approval" {
		t.Fatalf("created %+v", tool)
	}
	out := mustOK(t, sock, "tools", "show", "counter").out
	for _, want := range []string{"Status:", "pending_approval", "Approval:    ask", "code: return 1",
		"no version of this tool was approved yet", "toolcage tools approve counter"} {
		if !strings.Contains(out, want) {
			t.Errorf("show of a never-approved tool lacks %q:\n%s", want, out)
		}
	}
	mustOK(t, sock, "tools", "approve", "counter")
	// Approved and active: no pending section.
	if out := mustOK(t, sock, "tools", "show", "counter").out; strings.Contains(out, "Pending approval") {
		t.Errorf("show of an active tool has a pending section:\n%s", out)
	}
	// The agent changes the code: back to pending, shown as a diff.
	changed := strings.Replace(withPerm, "return 1", "return 2", 1)
	r := tcIn(t, sock, changed, append(asLLM, "tools", "update", "counter", "-f", "-")...)
	if r.code != exitOK {
		t.Fatalf("update: %v", r)
	}
	out = mustOK(t, sock, "tools", "show", "counter").out
	for _, want := range []string{"changes since version 1, the last one approved",
		"--- version 1 (approved)", "+++ version 2 (pending)", "-  code: return 1", "+  code: return 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("show of a changed tool lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "-  description") || strings.Contains(out, "+  description") {
		t.Errorf("diff shows unchanged lines as changed:\n%s", out)
	}
}

// TestToolsDeleteConfirm: acting as an llm, delete needs --confirm.
func TestToolsDeleteConfirm(t *testing.T) {
	sock := startDaemon(t)
	createTool(t, sock, agentJS, "--caller-type", "llm")
	wantExit(t, tc(t, sock, "--caller-type", "llm", "tools", "delete", "counter"), exitUsage, "confirm")
	mustOK(t, sock, "tools", "show", "counter")
	if out := mustOK(t, sock, "--caller-type", "llm", "tools", "delete", "counter", "--confirm").out; !strings.Contains(out, "Deleted tool counter") {
		t.Fatalf("confirmed delete: %q", out)
	}
	wantExit(t, tc(t, sock, "tools", "show", "counter"), exitFailure, "no tool named")
}
