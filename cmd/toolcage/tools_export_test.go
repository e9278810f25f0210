package main

import (
	"encoding/json"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
)

func TestToolsExport(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, addYAML)
	createTool(t, sock, lookupYAML)
	createTool(t, sock, "name: add_one\ndescription: d\nkind: js\njs: {code: 'return await utils.callTool(\"add_numbers\", {a: args.a, b: 1})'}\n")

	// audit --parent lists the calls a call's code made.
	r := mustOK(t, sock, "call", "add_one", "--args-json", `{"a": 1}`, "--json")
	parent := decodeStrict[api.CallResponse](t, r.out)
	r = mustOK(t, sock, "audit", "--parent", parent.CallID, "--json")
	if nested := decodeStrict[api.ExecutionList](t, r.out); len(nested.Executions) != 1 || nested.Executions[0].Tool != "add_numbers" || nested.Executions[0].ParentCallID != parent.CallID {
		t.Fatalf("audit --parent: %s", r.out)
	}
	mustOK(t, sock, "tools", "disable", "add_one") // out of the export below

	// Each format: a bare JSON array, one definition per active tool.
	shapes := map[string]func(m map[string]any) (name string, ok bool){
		"openai": func(m map[string]any) (string, bool) {
			fn, _ := m["function"].(map[string]any)
			_, params := fn["parameters"].(map[string]any)
			name, _ := fn["name"].(string)
			return name, m["type"] == "function" && params && len(m) == 2
		},
		"anthropic": func(m map[string]any) (string, bool) {
			_, schema := m["input_schema"].(map[string]any)
			name, _ := m["name"].(string)
			return name, schema && len(m) == 3
		},
		"mcp": func(m map[string]any) (string, bool) {
			_, schema := m["inputSchema"].(map[string]any)
			ann, _ := m["annotations"].(map[string]any)
			name, _ := m["name"].(string)
			return name, schema && len(ann) == 3 && len(m) == 4
		},
	}
	for format, shape := range shapes {
		r := mustOK(t, sock, "tools", "export", "--format", format)
		var list []map[string]any
		if err := json.Unmarshal([]byte(r.out), &list); err != nil {
			t.Fatalf("%s: %v\n%s", format, err, r.out)
		}
		var names []string
		for _, m := range list {
			name, ok := shape(m)
			if !ok {
				t.Errorf("%s: wrong shape %v", format, m)
			}
			names = append(names, name)
		}
		if len(names) != 2 || names[0] == names[1] {
			t.Errorf("%s: tools %v, want add_numbers and lookup", format, names)
		}
	}

	// A disabled tool is not exported; --wrap prints the whole answer.
	mustOK(t, sock, "tools", "disable", "lookup")
	r = mustOK(t, sock, "tools", "export", "--format", "mcp", "--wrap")
	got := decodeStrict[api.ToolDefinitions](t, r.out)
	if got.Format != "mcp" || len(got.Tools) != 1 {
		t.Errorf("wrapped: %+v", got)
	}

	wantExit(t, tc(t, sock, "tools", "export", "--format", "gemini"), exitUsage, "--format must be openai, anthropic or mcp")
	wantExit(t, tc(t, sock, "audit", "--admin", "--parent", "c1"), exitUsage, "--parent and --admin")
	wantExit(t, tc(t, sock, "tools", "export"), exitUsage, "format")
	wantExit(t, tc(t, sock, "tools", "export", "--format", "mcp", "--worker", "ghost"), exitFailure, "(not_found)")
}
