package main

import (
	"encoding/json"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/internal/filediff"
	"github.com/toolcage/toolcage/internal/termsafe"
)

// evil is agent-written text a terminal would obey rather than show: CSI
// (erase the line, move to column 1), an OSC title set and an OSC 8 link,
// a C1 CSI, a bare CR and backspaces, bidirectional overrides and
// isolates, zero-width characters, and a newline that would forge a row.
const evil = "harmless js\x1b[2K\x1b[1Gshell!\x1b]0;owned\x07\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\" +
	"\u009b31m\rjs\b\b\u202egnp.exe\u2066\u2069\u200b\u200d\ufeff\nforged_row   js   active"

// noRaw fails the test when out holds a character a terminal would obey
// (tab and newline aside) or a row the evil text forged.
func noRaw(t *testing.T, where, out string) {
	t.Helper()
	for _, r := range out {
		if r != '\n' && r != '\t' && termsafe.Unsafe(r) {
			t.Errorf("%s prints %U raw:\n%q", where, r, out)
			return
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "forged_row") {
			t.Errorf("%s shows a forged row:\n%s", where, out)
		}
	}
}

// TestAgentTextShownEscaped: what an agent wrote (a tool's description,
// category and parameter text; a call's arguments; an admin act's
// target) is shown escaped by tools show, tools list, approvals list,
// audit and audit --admin; --json stays the API's JSON (the same values,
// with JSON escapes), and tools show --definition reads back as the very
// definition.
func TestAgentTextShownEscaped(t *testing.T) {
	sock := startDaemon(t)
	// A definition is YAML to the daemon, which refuses C1 controls and
	// the BOM in one; the rest of evil gets in.
	evilDef := strings.NewReplacer("\u009b", "", "\ufeff", "").Replace(evil)
	def, err := json.Marshal(map[string]any{
		"name": "shady", "description": evilDef, "category": "Net" + evilDef, "kind": "js",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string", "description": evilDef}}},
		"js":         map[string]any{"code": "/* " + evilDef + " */\nreturn args"},
	})
	if err != nil {
		t.Fatal(err)
	}
	createTool(t, sock, string(def))
	createTool(t, sock, `{"name":"asky","description":"d","kind":"shell","approval":"ask","parameters":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]},"shell":{"command":"echo {{.x}}"}}`)
	args, _ := json.Marshal(map[string]string{"x": evil})
	// The shell guard refuses C0 and C1 controls in a command; the rest
	// of evil reaches the rendered argv a person approves.
	evilArg := strings.NewReplacer("\x1b", "", "\x07", "", "\r", "", "\b", "", "\n", "", "\u009b", "").Replace(evil)
	askArgs, _ := json.Marshal(map[string]string{"x": evilArg})
	if r := tc(t, sock, "call", "asky", "--args-json", string(askArgs), "--no-wait"); r.code != exitRefused || !strings.Contains(r.err, "approval") {
		t.Fatalf("asky: %v", r)
	}
	mustOK(t, sock, "call", "shady", "--args-json", string(args))
	// A caller id is a header's text: the audit table's CALLER column.
	mustOK(t, sock, "--caller-id", "bot\u202e\u2066\u200b", "call", "shady", "--args-json", string(args))
	tcIn(t, sock, "v\n", "--caller-type", "llm", "secrets", "set", "tok"+evil)

	for _, cmd := range [][]string{
		{"tools", "show", "shady"}, {"tools", "list"}, {"tools", "show", "shady", "--definition"},
		{"approvals", "list"}, {"approvals", "list", "--status", "all"},
		{"audit"}, {"audit", "--admin"}, {"audit", "--tool", "asky"},
		{"tools", "show", "shady", "--json"}, {"approvals", "list", "--json"}, {"audit", "--json"}, {"audit", "--admin", "--json"},
		{"call", "shady", "--args-json", string(args)},
	} {
		r := tc(t, sock, cmd...)
		noRaw(t, strings.Join(cmd, " ")+" (stdout)", r.out)
		noRaw(t, strings.Join(cmd, " ")+" (stderr)", r.err)
	}
	// What is shown says what is there.
	if out := mustOK(t, sock, "tools", "show", "shady").out; !strings.Contains(out, `harmless js\u001b[2K\u001b[1Gshell!`) || !strings.Contains(out, `\u202egnp.exe`) {
		t.Errorf("tools show does not show the escapes:\n%s", out)
	}
	// --json is the API's JSON: the same values.
	tool := showTool(t, sock, "shady")
	var got struct {
		Description string `json:"description"`
		Category    string `json:"category"`
	}
	if err := json.Unmarshal(tool.Definition, &got); err != nil || got.Description != evilDef || got.Category != "Net"+evilDef {
		t.Errorf("--json changed the values: %+v %v", got, err)
	}
	l := decodeStrict[api.ApprovalList](t, mustOK(t, sock, "approvals", "list", "--json").out)
	if len(l.Approvals) != 1 {
		t.Fatalf("approvals: %+v", l)
	}
	var a struct{ X string }
	if err := json.Unmarshal(l.Approvals[0].Arguments, &a); err != nil || a.X != evilArg {
		t.Errorf("approval arguments through --json: %q %v", a.X, err)
	}
	// The definition as YAML reads back as itself.
	y := mustOK(t, sock, "tools", "show", "shady", "--definition").out
	j, err := sigsyaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("--definition is not YAML: %v\n%s", err, y)
	}
	if !sameJSON(t, j, tool.Definition) {
		t.Errorf("--definition does not read back as the definition:\n%s\n%s", j, tool.Definition)
	}
}

// A file change an agent's call would make is printed line by line,
// escaped (its tabs kept); the list's WHAT cell is its summary.
func TestApprovalChangeShownEscaped(t *testing.T) {
	change := filediff.Unified("a.go", filediff.File{Data: []byte("\told\n"), Exists: true}, filediff.File{Data: []byte(evil + "\n"), Exists: true})
	var b strings.Builder
	writeChange(&b, change, 0, "abcd2345")
	out := b.String()
	noRaw(t, "the change", out)
	if !strings.Contains(out, "  -\told\n") || !strings.Contains(out, `\u001b[2K`) {
		t.Errorf("change:\n%s", out)
	}
	b.Reset()
	writeChange(&b, change, 3, "abcd2345")
	if got := b.String(); !strings.HasSuffix(got, "… 4 more lines: toolcage approvals show abcd2345\n") || strings.Count(got, "\n") != 4 {
		t.Errorf("cut change:\n%s", got)
	}
	if w := approvalWhat(api.Approval{Change: change}); w != "edit a.go: +2 -1 lines" {
		t.Errorf("WHAT %q", w)
	}
	if w := approvalWhat(api.Approval{Rendered: "sh -c x", Change: change}); w != "sh -c x" {
		t.Errorf("WHAT %q", w)
	}
}
