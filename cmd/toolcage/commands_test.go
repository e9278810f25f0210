package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
)

// These tests run the CLI against a fake daemon on a Unix socket: they check
// the requests each command sends and what it makes of the answers.

func toolBody(t *testing.T, yamlText, status string) string {
	t.Helper()
	b, err := json.Marshal(api.Tool{Definition: definitionJSON(t, yamlText), Status: status, CreatedBy: "user", Version: 1, CreatedAt: t0, UpdatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const okCall = `{"call_id":"c_1","tool":"add_numbers","version":1,"result":{"sum":42.5},"logs":[{"level":"info","message":"adding"}],"is_error":false,"duration_ms":3.2}`

func TestCallTypedArgs(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET /v1/tools/add_numbers", reply(200, toolBody(t, addYAML, "active")))
	mux.Handle("POST /v1/tools/add_numbers/call", reply(200, okCall))
	d := newFakeDaemon(t, mux)

	r := runCLI(t, "", "--socket", d.socket, "call", "add_numbers", "--arg", "a=2", "--arg", "b=40.5", "--arg", "exact=yes", "--arg", "label=x=y,z")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	reqs := d.requests()
	if len(reqs) != 2 {
		t.Fatalf("requests: %+v", reqs)
	}
	if want := `{"arguments":{"a":2,"b":40.5,"exact":true,"label":"x=y,z"}}`; reqs[1].Body != want {
		t.Errorf("call body %s, want %s", reqs[1].Body, want)
	}
	if reqs[1].CallerType != "user" {
		t.Errorf("caller type header %q", reqs[1].CallerType)
	}
	if r.out != "{\n  \"sum\": 42.5\n}\n" {
		t.Errorf("stdout %q", r.out)
	}
	if r.err != "info: adding\ncall c_1 · v1 · 3.2 ms\n" {
		t.Errorf("stderr %q", r.err)
	}
}

func TestCallArgsRefusedLocally(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET /v1/tools/add_numbers", reply(200, toolBody(t, addYAML, "active")))
	mux.Handle("POST /v1/tools/add_numbers/call", reply(200, okCall))
	d := newFakeDaemon(t, mux)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--arg", "a=two", "--arg", "b=1"}, `Error: argument "a": "two" is not a number (invalid_arguments)`},
		{[]string{"--arg", "a=1"}, "Error: arguments for add_numbers: at /: missing property 'b' (invalid_arguments)"},
		{[]string{"--arg", "a=1", "--arg", "b=2", "--arg", "exact=perhaps"}, `"perhaps" is not a boolean`},
		{[]string{"--arg", "a"}, `argument "a": want key=value`},
		{[]string{"--arg", "a=1", "--arg", "a=2"}, `argument "a" given more than once`},
	}
	for _, tt := range tests {
		r := runCLI(t, "", append([]string{"--socket", d.socket, "call", "add_numbers"}, tt.args...)...)
		if r.code != exitUsage || !strings.Contains(r.err, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, r.code, r.err, tt.want)
		}
	}
	for _, req := range d.requests() {
		if req.Method == http.MethodPost {
			t.Errorf("refused arguments were sent: %+v", req)
		}
	}
}

func TestCallOutcomes(t *testing.T) {
	tests := []struct {
		name     string
		handler  http.Handler
		args     []string
		stdin    string
		wantCode int
		wantOut  string // exact stdout, when set
		wantErr  string // in stderr
		wantBody string // the call request body, when set
	}{
		{
			name: "no arguments sends {}", handler: reply(200, okCall),
			wantCode: 0, wantBody: `{"arguments":{}}`,
		},
		{
			name: "args-json from stdin", handler: reply(200, okCall), args: []string{"--args-json", "-"}, stdin: ` {"a": 1, "b": [2]} ` + "\n",
			wantCode: 0, wantBody: `{"arguments":{"a":1,"b":[2]}}`,
		},
		{
			name:     "tool reports an error",
			handler:  reply(200, `{"call_id":"c_2","tool":"t","version":4,"result":null,"logs":[],"is_error":true,"error":"TypeError: x is undefined","duration_ms":1}`),
			wantCode: 1, wantOut: "", wantErr: "Error: tool t reported an error: TypeError: x is undefined",
		},
		{
			name:    "json prints the body and still exits 1 on is_error",
			handler: reply(200, `{"call_id":"c_2","tool":"t","version":4,"result":null,"logs":[],"is_error":true,"error":"bad","duration_ms":1}`+"\n"),
			args:    []string{"--json"}, wantCode: 1,
			wantOut: "{\n  \"call_id\": \"c_2\",\n  \"tool\": \"t\",\n  \"version\": 4,\n  \"result\": null,\n  \"logs\": [],\n  \"is_error\": true,\n  \"error\": \"bad\",\n  \"duration_ms\": 1\n}\n",
		},
		{
			name: "policy denied exits 3", handler: errorReply(403, "policy_denied", `command matches deny rule "rm-root"`),
			wantCode: 3, wantErr: `Error: command matches deny rule "rm-root" (policy_denied)`,
		},
		{
			name: "approval required answered 202 exits 3", handler: errorReply(202, "approval_required", "this call waits for approval"),
			wantCode: 3, wantErr: "Error: this call waits for approval (approval_required)",
		},
		{
			name: "rate limited exits 3", handler: errorReply(429, "rate_limited", "slow down"),
			wantCode: 3, wantErr: "(rate_limited)",
		},
		{
			name: "not active exits 3", handler: errorReply(409, "tool_not_active", "tool t is disabled"),
			wantCode: 3, wantErr: "Error: tool t is disabled (tool_not_active)",
		},
		{
			name: "timeout exits 1", handler: errorReply(504, "timeout", "call took longer than 10s"),
			wantCode: 1, wantErr: "Error: call took longer than 10s (timeout)",
		},
		{
			name: "daemon rejects arguments exits 2", handler: errorReply(400, "invalid_arguments", "at /a: want number"),
			wantCode: 2, wantErr: "Error: at /a: want number (invalid_arguments)",
		},
		{
			name: "not found exits 1", handler: errorReply(404, "tool_not_found", `tool "t" not found`),
			wantCode: 1, wantErr: `(tool_not_found)`,
		},
		{
			name: "plain-text 500 exits 1", handler: reply(500, "upstream exploded"),
			wantCode: 1, wantErr: "Error: upstream exploded (internal)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle("POST /v1/tools/t/call", tt.handler)
			d := newFakeDaemon(t, mux)
			r := runCLI(t, tt.stdin, append([]string{"--socket", d.socket, "call", "t"}, tt.args...)...)
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr %q", r.code, tt.wantCode, r.err)
			}
			if tt.wantOut != "" || tt.wantCode != 0 {
				if tt.wantOut != r.out {
					t.Errorf("stdout %q, want %q", r.out, tt.wantOut)
				}
			}
			if !strings.Contains(r.err, tt.wantErr) {
				t.Errorf("stderr %q lacks %q", r.err, tt.wantErr)
			}
			if tt.wantBody != "" {
				if reqs := d.requests(); len(reqs) != 1 || reqs[0].Body != tt.wantBody {
					t.Errorf("requests %+v, want one with body %s", reqs, tt.wantBody)
				}
			}
		})
	}
}

func TestToolsCreateSendsParsedDefinition(t *testing.T) {
	mux := http.NewServeMux()
	created := toolBody(t, dnsYAML, "active")
	mux.Handle("POST /v1/tools", reply(201, created))
	d := newFakeDaemon(t, mux)

	r := runCLI(t, dnsYAML, "--socket", d.socket, "--caller-type", "llm", "tools", "create", "-f", "-")
	if r.code != 0 || r.out != "Created tool dns_lookup: version 1, status active\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	reqs := d.requests()
	if len(reqs) != 1 || reqs[0].CallerType != "llm" {
		t.Fatalf("requests %+v", reqs)
	}
	sent, err := catalog.ParseJSON([]byte(reqs[0].Body))
	if err != nil {
		t.Fatalf("sent definition does not parse: %v\n%s", err, reqs[0].Body)
	}
	want, _ := catalog.Parse([]byte(dnsYAML))
	a, _ := json.Marshal(sent)
	b, _ := json.Marshal(want)
	if !bytes.Equal(a, b) {
		t.Errorf("sent %s, want %s", a, b)
	}

	// --json prints the daemon's answer.
	r = runCLI(t, dnsYAML, "--socket", d.socket, "tools", "create", "-f", "-", "--json")
	var got api.Tool
	if r.code != 0 || json.Unmarshal([]byte(r.out), &got) != nil || got.Status != "active" || !strings.HasPrefix(r.out, "{\n  \"definition\": {\n") {
		t.Errorf("exit %d, stdout %q", r.code, r.out)
	}
}

func TestToolsCommandsRequests(t *testing.T) {
	tool := toolBody(t, dnsYAML, "active")
	tests := []struct {
		name       string
		args       []string
		route      string // the pattern the fake daemon serves
		answer     http.Handler
		wantQuery  string
		wantBody   string
		wantCode   int
		wantStdout string // prefix
	}{
		{name: "list with filters", args: []string{"tools", "list", "--status", "active", "--kind", "js", "--category", "Math Tools", "--created-by", "llm", "--limit", "5", "--offset", "0"},
			route: "GET /v1/tools", answer: reply(200, `{"tools":[],"total":0}`),
			wantQuery: "category=Math+Tools&created_by=llm&kind=js&limit=5&offset=0&status=active", wantStdout: "NAME   KIND"},
		{name: "list json", args: []string{"tools", "ls", "--json"}, route: "GET /v1/tools", answer: reply(200, `{"tools":[],"total":0}`),
			wantStdout: "{\n  \"tools\": [],\n  \"total\": 0\n}\n"},
		{name: "global json", args: []string{"--json", "tools", "list"}, route: "GET /v1/tools", answer: reply(200, `{"tools":[],"total":0}`),
			wantStdout: "{\n  \"tools\": [],\n  \"total\": 0\n}\n"},
		{name: "show", args: []string{"tools", "show", "dns_lookup"}, route: "GET /v1/tools/dns_lookup", answer: reply(200, tool),
			wantStdout: "Name:        dns_lookup\n"},
		{name: "show definition", args: []string{"tools", "show", "dns_lookup", "--definition"}, route: "GET /v1/tools/dns_lookup", answer: reply(200, tool),
			wantStdout: "name: dns_lookup\ndescription: Look up DNS records for a domain\nkind: shell\n"},
		{name: "show definition json", args: []string{"tools", "show", "-d", "--json", "dns_lookup"}, route: "GET /v1/tools/dns_lookup", answer: reply(200, tool),
			wantStdout: "{\n  \"name\": \"dns_lookup\",\n"},
		{name: "delete", args: []string{"tools", "delete", "dns_lookup"}, route: "DELETE /v1/tools/dns_lookup", answer: reply(204, ""),
			wantStdout: "Deleted tool dns_lookup\n"},
		{name: "enable", args: []string{"tools", "enable", "dns_lookup"}, route: "POST /v1/tools/dns_lookup/enable", answer: reply(200, tool),
			wantStdout: "Enabled tool dns_lookup: version 1, status active\n"},
		{name: "disable", args: []string{"tools", "disable", "dns_lookup"}, route: "POST /v1/tools/dns_lookup/disable", answer: reply(200, tool), wantStdout: "Disabled tool"},
		{name: "approve", args: []string{"tools", "approve", "dns_lookup"}, route: "POST /v1/tools/dns_lookup/approve", answer: reply(200, tool), wantStdout: "Approved tool"},
		{name: "reject", args: []string{"tools", "reject", "dns_lookup"}, route: "POST /v1/tools/dns_lookup/reject", answer: reply(200, tool), wantStdout: "Rejected tool"},
		{name: "approve refused for llm", args: []string{"tools", "approve", "dns_lookup"}, route: "POST /v1/tools/dns_lookup/approve",
			answer: errorReply(403, "forbidden", "only a person may approve"), wantCode: 3},
		{name: "rollback", args: []string{"tools", "rollback", "dns_lookup", "--to", "2"}, route: "POST /v1/tools/dns_lookup/rollback", answer: reply(200, tool),
			wantBody: `{"version":2}`, wantStdout: "Rolled back tool dns_lookup"},
		{name: "history", args: []string{"tools", "history", "dns_lookup"}, route: "GET /v1/tools/dns_lookup/history",
			answer: reply(200, `{"tool":"dns_lookup","current":1,"versions":[{"version":1,"definition":{},"created_at":"2026-03-14T09:26:53Z"}]}`), wantStdout: "VERSION   CREATED"},
		{name: "stats", args: []string{"tools", "stats"}, route: "GET /v1/stats", answer: reply(200, `{"total":3}`), wantStdout: "Tools:              3\n"},
		{name: "audit", args: []string{"audit", "--tool", "dns_lookup", "--limit", "10"}, route: "GET /v1/executions", answer: reply(200, `{"executions":[]}`),
			wantQuery: "limit=10&tool=dns_lookup", wantStdout: "ID   TOOL"},
		{name: "health", args: []string{"health"}, route: "GET /v1/health", answer: reply(200, `{"status":"ok","version":"v1","uptime_seconds":5}`), wantStdout: "Status:   ok\n"},
		{name: "health not ok", args: []string{"health"}, route: "GET /v1/health", answer: reply(200, `{"status":"degraded"}`), wantCode: 1, wantStdout: "Status:   degraded\n"},
		{name: "js", args: []string{"js", "--code", "return args.n * 2", "--args-json", `{"n":21}`, "--timeout", "5s", "--memory", "64MiB"}, route: "POST /v1/js",
			answer:   reply(200, `{"call_id":"c_9","tool":"","version":0,"result":42,"logs":null,"is_error":false,"duration_ms":2}`),
			wantBody: `{"code":"return args.n * 2","arguments":{"n":21},"timeout":"5s","memory":"64MiB"}`, wantStdout: "42\n"},
		{name: "tool names are path-escaped", args: []string{"tools", "show", "a/b c"}, route: "GET /v1/tools/{name}", answer: errorReply(404, "tool_not_found", "no"), wantCode: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle(tt.route, tt.answer)
			mux.Handle("/", errorReply(400, "invalid_request", "no route"))
			d := newFakeDaemon(t, mux)
			r := runCLI(t, "", append([]string{"--socket", d.socket}, tt.args...)...)
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, tt.wantCode, r.err)
			}
			if !strings.HasPrefix(r.out, tt.wantStdout) {
				t.Errorf("stdout %q, want prefix %q", r.out, tt.wantStdout)
			}
			reqs := d.requests()
			if len(reqs) != 1 {
				t.Fatalf("requests %+v", reqs)
			}
			if reqs[0].Query != tt.wantQuery {
				t.Errorf("query %q, want %q", reqs[0].Query, tt.wantQuery)
			}
			if tt.wantBody != "" && reqs[0].Body != tt.wantBody {
				t.Errorf("body %s, want %s", reqs[0].Body, tt.wantBody)
			}
		})
	}
}

func TestToolsUpdate(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("PUT /v1/tools/dns_lookup", reply(200, toolBody(t, dnsYAML, "active")))
	d := newFakeDaemon(t, mux)

	r := runCLI(t, dnsYAML, "--socket", d.socket, "tools", "update", "dns_lookup", "-f", "-")
	if r.code != 0 || r.out != "Updated tool dns_lookup: version 1, status active\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	// A file naming another tool is refused before the daemon is asked.
	r = runCLI(t, dnsYAML, "--socket", d.socket, "tools", "update", "other_tool", "-f", "-")
	if r.code != exitUsage || !strings.Contains(r.err, `named "dns_lookup", not "other_tool"`) {
		t.Errorf("exit %d, stderr %q", r.code, r.err)
	}
	if n := len(d.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}
