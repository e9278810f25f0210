package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/internal/testutil"
)

// These tests run the CLI in-process against a real daemon (SQLite store,
// executor processes) on a Unix socket. What a command sent is proven by
// what the daemon did with it: the tool's state, the result of a call, the
// audit log.

// jsDef is the definition of a js tool running code; extra lines (YAML) go
// before the code.
func jsDef(name, code string, extra ...string) string {
	q, _ := json.Marshal(code) // a JSON string is a YAML double-quoted scalar
	def := "name: " + name + "\ndescription: test tool " + name + "\nkind: js\n"
	for _, e := range extra {
		def += e + "\n"
	}
	return def + "js:\n  code: " + string(q) + "\n"
}

// typedYAML declares a parameter of every type; the code returns the
// JavaScript type each argument arrived as.
const typedYAML = `name: typed
description: Reports the type of each argument
kind: js
parameters:
  type: object
  properties:
    a: {type: number}
    b: {type: number}
    exact: {type: boolean}
    label: {type: string}
    count: {type: integer}
    tags: {type: array, items: {type: string}}
    opts: {type: object}
  required: [a, b]
js:
  code: |
    console.info("adding");
    const types = {};
    for (const k of Object.keys(args)) types[k] = Array.isArray(args[k]) ? "array" : typeof args[k];
    return {sum: args.a + args.b, types: types};
`

func TestCallTypedArgs(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, typedYAML)

	r := tc(t, sock, "call", "typed", "--arg", "a=2", "--arg", "b=40.5", "--arg", "exact=yes", "--arg", "label=x=y,z",
		"--arg", "count=3", "--arg", `tags=["p", "q,r"]`, "--arg", `opts={"k": 1}`)
	if r.code != exitOK {
		t.Fatalf("call: %v", r)
	}
	// Each value arrived as the type the schema gives it.
	want := `{"sum": 42.5, "types": {"a": "number", "b": "number", "count": "number", "exact": "boolean", "label": "string", "opts": "object", "tags": "array"}}`
	if !sameJSON(t, []byte(r.out), []byte(want)) || !strings.HasPrefix(r.out, "{\n  \"sum\": 42.5,\n  \"types\": {\n") {
		t.Errorf("stdout %q, want %s indented", r.out, want)
	}
	// Logs, then the call line, on stderr.
	if !regexp.MustCompile(`^info: adding\ncall c[0-9a-f]{16} · v1 · [0-9.]+ ms\n$`).MatchString(r.err) {
		t.Errorf("stderr %q", r.err)
	}
	// The audit log holds exactly the arguments sent, and who sent them.
	recs := audit(t, sock, "typed")
	if len(recs) != 1 {
		t.Fatalf("audit: %+v", recs)
	}
	e := recs[0]
	if e.ID != callIDOf(t, r) || e.Outcome != "ok" || e.Version != 1 || e.CallerType != "user" || e.CallerID != fmt.Sprintf("uid:%d", os.Getuid()) {
		t.Errorf("audit record %+v", e)
	}
	if wantArgs := `{"a":2,"b":40.5,"count":3,"exact":true,"label":"x=y,z","opts":{"k":1},"tags":["p","q,r"]}`; !sameJSON(t, e.Arguments, []byte(wantArgs)) {
		t.Errorf("arguments recorded %s, want %s", e.Arguments, wantArgs)
	}

	// --json prints the daemon's answer as is.
	r = tc(t, sock, "call", "typed", "--arg", "a=1", "--arg", "b=2", "--json")
	resp := decodeStrict[api.CallResponse](t, r.out)
	if r.code != exitOK || resp.Tool != "typed" || resp.Version != 1 || resp.IsError || !sameJSON(t, resp.Result, []byte(`{"sum":3,"types":{"a":"number","b":"number"}}`)) ||
		len(resp.Logs) != 1 || resp.Logs[0].Level != "info" || resp.Logs[0].Message != "adding" || !regexp.MustCompile(`^c[0-9a-f]{16}$`).MatchString(resp.CallID) {
		t.Errorf("call --json: %v", r)
	}
	if r.err != "" {
		t.Errorf("call --json wrote to stderr: %q", r.err)
	}
}

func TestCallArgsRefusedLocally(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, typedYAML)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--arg", "a=two", "--arg", "b=1"}, `Error: argument "a": "two" is not a number (invalid_arguments)`},
		{[]string{"--arg", "a=1"}, "Error: arguments for typed: at /: missing property 'b' (invalid_arguments)"},
		{[]string{"--arg", "a=1", "--arg", "b=2", "--arg", "exact=perhaps"}, `"perhaps" is not a boolean`},
		{[]string{"--arg", "a=1", "--arg", "b=2", "--arg", "count=1.5"}, `argument "count": "1.5" is not an integer`},
		{[]string{"--arg", "a=1", "--arg", "b=2", "--arg", "tags=p,q"}, `argument "tags": "p,q" is not a JSON array`},
		{[]string{"--arg", "a=1", "--arg", "b=2", "--arg", "tags=[1]"}, "Error: arguments for typed: at /tags/0:"},
		{[]string{"--arg", "a"}, `argument "a": want key=value`},
		{[]string{"--arg", "a=1", "--arg", "a=2"}, `argument "a" given more than once`},
	}
	for _, tt := range tests {
		r := tc(t, sock, append([]string{"call", "typed"}, tt.args...)...)
		if r.code != exitUsage || !strings.Contains(r.err, tt.want) || r.out != "" {
			t.Errorf("%v: %v\nwant exit 2 and %q", tt.args, r, tt.want)
		}
	}
	// Nothing reached the daemon's call path: no audit record, no use.
	if recs := audit(t, sock, ""); len(recs) != 0 {
		t.Errorf("refused arguments were sent: %+v", recs)
	}
	if tool := showTool(t, sock, "typed"); tool.UsageCount != 0 || tool.LastUsedAt != nil {
		t.Errorf("tool used: %+v", tool)
	}
}

func TestCallOutcomes(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	for _, def := range []string{
		jsDef("echo", "return args"),
		jsDef("thrower", "\nthrow new TypeError('x is undefined')"),
		jsDef("blocked", "return 1", "approval: blocked"),
		jsDef("ask", "return 1", "approval: ask"),
		jsDef("switched_off", "return 1"),
		jsDef("spin", "while (true) {}", "limits: {timeout: 200ms}"),
		jsDef("adder", "return args.a + args.b", "parameters: {type: object, properties: {a: {type: number}, b: {type: number}}, required: [a, b]}"),
	} {
		createTool(t, sock, def)
	}
	mustOK(t, sock, "tools", "disable", "switched_off")

	type rec struct {
		outcome, code, limit, args string // args: JSON, compared as values
	}
	tests := []struct {
		name     string
		global   []string // flags before "call"
		args     []string // after "call"
		stdin    string
		wantCode int
		wantOut  string   // exact stdout
		wantErr  []string // in stderr
		wantRec  *rec     // the audit record the call leaves; nil: none
		tool     string   // whose audit to read
		caller   string   // the caller type recorded
	}{
		{name: "no arguments sends {}", args: []string{"echo"}, wantOut: "{}\n", tool: "echo",
			wantRec: &rec{outcome: "ok", args: `{}`}},
		{name: "args-json", args: []string{"echo", "--args-json", `{"a": 1, "b": [2], "c": {"d": null}}`}, tool: "echo",
			wantOut: "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ],\n  \"c\": {\n    \"d\": null\n  }\n}\n",
			wantRec: &rec{outcome: "ok", args: `{"a":1,"b":[2],"c":{"d":null}}`}},
		{name: "args-json from stdin", args: []string{"echo", "--args-json", "-"}, stdin: ` {"a": 1, "b": [2]} ` + "\n", tool: "echo",
			wantOut: "{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}\n", wantRec: &rec{outcome: "ok", args: `{"a":1,"b":[2]}`}},
		{name: "a schema-less tool takes --arg values as strings", args: []string{"echo", "--arg", "n=1", "--arg", "ok=true"}, tool: "echo",
			wantOut: "{\n  \"n\": \"1\",\n  \"ok\": \"true\"\n}\n", wantRec: &rec{outcome: "ok", args: `{"n":"1","ok":"true"}`}},
		{name: "llm caller is recorded", global: []string{"--caller-type", "llm", "--caller-id", "agent-7"}, args: []string{"echo", "--arg", "q=1"}, tool: "echo", caller: "llm",
			wantOut: "{\n  \"q\": \"1\"\n}\n", wantRec: &rec{outcome: "ok", args: `{"q":"1"}`}},
		{name: "tool reports an error", args: []string{"thrower"}, tool: "thrower", wantCode: exitFailure,
			wantErr: []string{"Error: tool thrower reported an error: TypeError: x is undefined (line 2)\n"},
			wantRec: &rec{outcome: "error", args: `{}`}},
		{name: "policy denied exits 3", args: []string{"blocked"}, tool: "blocked", wantCode: exitRefused,
			wantErr: []string{`Error: tool "blocked" is blocked by its approval setting (policy_denied)`},
			wantRec: &rec{outcome: "refused", code: "policy_denied", args: `{}`}},
		{name: "approval required exits 3", args: []string{"ask", "--no-wait"}, tool: "ask", wantCode: exitRefused,
			wantErr: []string{`Error: tool "ask" needs a person's approval for each call`, "(approval_required)", "  approval id: "},
			wantRec: &rec{outcome: "refused", code: "approval_required", args: `{}`}},
		{name: "not active exits 3", args: []string{"switched_off"}, tool: "switched_off", wantCode: exitRefused,
			wantErr: []string{`Error: tool "switched_off" is disabled; only active tools run (tool_not_active)`},
			wantRec: &rec{outcome: "refused", code: "tool_not_active", args: `{}`}},
		{name: "timeout exits 1", args: []string{"spin"}, tool: "spin", wantCode: exitFailure,
			wantErr: []string{"Error: ", "200ms", "(timeout)"},
			wantRec: &rec{outcome: "failed", code: "timeout", limit: "timeout", args: `{}`}},
		{name: "daemon rejects arguments exits 2", args: []string{"adder", "--args-json", `{"a": "1", "b": 2}`}, tool: "adder", wantCode: exitUsage,
			wantErr: []string{"Error: ", "/a", "(invalid_arguments)"},
			wantRec: &rec{outcome: "refused", code: "invalid_arguments", args: `{"a":"1","b":2}`}},
		{name: "not found exits 1", args: []string{"nope"}, tool: "nope", wantCode: exitFailure,
			wantErr: []string{`Error: no tool named "nope" (tool_not_found)`}},
		{name: "not found with --arg exits 1", args: []string{"nope", "--arg", "a=1"}, tool: "nope", wantCode: exitFailure,
			wantErr: []string{`Error: no tool named "nope" (tool_not_found)`}},
		{name: "names are path-escaped", args: []string{"a/b c"}, tool: "a/b c", wantCode: exitFailure,
			wantErr: []string{`Error: no tool named "a/b c" (tool_not_found)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(audit(t, sock, tt.tool))
			r := runCLI(t, tt.stdin, append(append(append([]string{"--socket", sock}, tt.global...), "call"), tt.args...)...)
			wantExit(t, r, tt.wantCode, tt.wantErr...)
			if r.out != tt.wantOut {
				t.Errorf("stdout %q, want %q", r.out, tt.wantOut)
			}
			recs := audit(t, sock, tt.tool)
			if tt.wantRec == nil {
				if len(recs) != before {
					t.Errorf("audit records: %+v", recs)
				}
				return
			}
			if len(recs) != before+1 {
				t.Fatalf("want one new audit record, got %+v", recs)
			}
			e := recs[0]
			caller := "user"
			if tt.caller != "" {
				caller = tt.caller
			}
			if e.ID != callIDOf(t, r) || e.Outcome != tt.wantRec.outcome || e.ErrorCode != tt.wantRec.code || e.Limit != tt.wantRec.limit ||
				e.CallerType != caller || !sameJSON(t, e.Arguments, []byte(tt.wantRec.args)) {
				t.Errorf("audit record %+v, want %+v from the call on stderr", e, *tt.wantRec)
			}
			if tt.caller == "llm" && e.CallerID != "agent-7" {
				t.Errorf("caller id %q", e.CallerID)
			}
			if tt.wantCode == exitOK && !callLine.MatchString(r.err) {
				t.Errorf("no call line on stderr: %q", r.err)
			}
		})
	}

	// --json prints the body and still exits 1 when the tool reports an error.
	r := tc(t, sock, "call", "thrower", "--json")
	wantExit(t, r, exitFailure, `{"error":{"code":"failed","message":"tool thrower reported an error: TypeError: x is undefined`)
	resp := decodeStrict[api.CallResponse](t, r.out)
	if !resp.IsError || resp.Error != "TypeError: x is undefined (line 2)" || string(resp.Result) != "null" || resp.Logs == nil || len(resp.Logs) != 0 || resp.Tool != "thrower" || resp.Version != 1 {
		t.Errorf("is_error --json: %+v", resp)
	}
	// A refusal prints nothing on stdout, even with --json.
	r = tc(t, sock, "--json", "call", "blocked")
	wantExit(t, r, exitRefused, `{"error":{"code":"policy_denied",`)
	if r.out != "" {
		t.Errorf("stdout %q", r.out)
	}
}

func TestCallRateLimited(t *testing.T) {
	t.Parallel()
	ld := launchDaemon(t, func(c *daemon.Config) {
		c.Executor.MaxPerKey = 1
		c.Executor.AcquireTimeout = 200 * time.Millisecond
	})
	sock := ld.socket
	createTool(t, sock, jsDef("sleepy", "const end = Date.now() + args.ms; while (Date.now() < end) {} return 'slept'",
		"parameters: {type: object, properties: {ms: {type: number}}, required: [ms]}"))

	// One long call holds the only executor; a second call waits, then is
	// refused. The probes go on until the long call is over; should a probe
	// hold the executor when the long call asks, the long call is refused
	// itself and tries again.
	longDone := make(chan result, 1)
	go func() {
		var r result
		for range 20 {
			if r = runProcess("--socket", sock, "call", "sleepy", "--arg", "ms=1500"); r.code != exitRefused {
				break
			}
		}
		longDone <- r
	}()
	var refused, long result
probing:
	for {
		select {
		case long = <-longDone:
			break probing
		default:
		}
		r := tc(t, sock, "call", "sleepy", "--arg", "ms=0")
		switch r.code {
		case exitOK:
			time.Sleep(10 * time.Millisecond)
		case exitRefused:
			refused, long = r, <-longDone
			break probing
		default:
			t.Fatalf("probe call: %v", r)
		}
	}
	if long.code != exitOK || long.out != "\"slept\"\n" {
		t.Errorf("long call: %v", long)
	}
	if refused.code == 0 {
		t.Fatal("no call was rate limited while the only executor was busy")
	}
	wantExit(t, refused, exitRefused, "(rate_limited)", "\n  retry after: 1s\n")
	id := callIDOf(t, refused)
	for _, e := range audit(t, sock, "sleepy") {
		if e.ID == id {
			if e.Outcome != "refused" || e.ErrorCode != "rate_limited" {
				t.Errorf("audit record %+v", e)
			}
			return
		}
	}
	t.Errorf("refused call %s not in the audit log", id)
}

func TestCallTruncatedOutput(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, jsDef("chatty", "for (let i = 0; i < 200; i++) console.log('line ' + i + ' ' + 'x'.repeat(40)); return 'done'", "limits: {output: 1KiB}"))
	r := mustOK(t, sock, "call", "chatty")
	if r.out != "\"done\"\n" || !strings.HasPrefix(r.err, "log: line 0 xxxx") || !strings.Contains(r.err, "\n(output truncated at the tool's output limit)\ncall c") ||
		strings.Contains(r.err, "line 199") {
		t.Errorf("%v", r)
	}
	resp := decodeStrict[api.CallResponse](t, mustOK(t, sock, "call", "chatty", "--json").out)
	if !resp.Truncated || len(resp.Logs) == 0 || len(resp.Logs) >= 200 {
		t.Errorf("truncated --json: %+v", resp)
	}
}

// TestApprovalRequiredIn2xxBody: an error body under a 2xx status is still
// an error (request expects approval_required as 202 Accepted; this daemon
// answers it with 403, see TestCallOutcomes), while a call response's
// "error" string is not.
func TestApprovalRequiredIn2xxBody(t *testing.T) {
	err := errorBody(json.RawMessage(`{"error":{"code":"approval_required","message":"this call waits for approval"}}`))
	if exitCode(err) != exitRefused || err.(*api.Error).Message != "this call waits for approval" {
		t.Errorf("errorBody = %v", err)
	}
	if err := errorBody(json.RawMessage(`{"call_id":"c","is_error":true,"error":"boom"}`)); err != nil {
		t.Errorf("a call response read as an error: %v", err)
	}
}

func TestToolsCreate(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	parsed := func(def string) json.RawMessage {
		d, err := catalog.Parse([]byte(def))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(d)
		return b
	}
	// What the daemon stored is the parsed file, field for field.
	stored := func(name string) json.RawMessage {
		return json.RawMessage(mustOK(t, sock, "tools", "show", name, "--definition", "--json").out)
	}

	// From a YAML file.
	r := mustOK(t, sock, "tools", "create", "-f", writeFile(t, "add.yaml", addYAML))
	if r.out != "Created tool add_numbers: version 1, status active\n" || r.err != "" {
		t.Errorf("%v", r)
	}
	if !sameJSON(t, stored("add_numbers"), parsed(addYAML)) {
		t.Errorf("stored %s, want %s", stored("add_numbers"), parsed(addYAML))
	}
	if r := mustOK(t, sock, "call", "add_numbers", "--arg", "a=2", "--arg", "b=40.5"); r.out != "{\n  \"sum\": 42.5,\n  \"label\": \"yes\"\n}\n" {
		t.Errorf("call: %v", r)
	}

	// From a JSON file.
	jsonDef := `{"name": "from_json", "description": "made from JSON", "kind": "js", "category": "Tests",
  "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
  "limits": {"timeout": "5s"}, "js": {"code": "return args.n * 2"}}`
	r = mustOK(t, sock, "tools", "create", "--file", writeFile(t, "t.json", jsonDef))
	if r.out != "Created tool from_json: version 1, status active\n" {
		t.Errorf("%v", r)
	}
	if !sameJSON(t, stored("from_json"), parsed(jsonDef)) {
		t.Errorf("stored %s", stored("from_json"))
	}
	if r := mustOK(t, sock, "call", "from_json", "--arg", "n=21"); r.out != "42\n" {
		t.Errorf("call: %v", r)
	}

	// From stdin, as an llm asking for a dangerous permission: it waits for
	// a person.
	r = tcIn(t, sock, dnsYAML, "--caller-type", "llm", "tools", "create", "-f", "-")
	if r.code != exitOK || r.out != "Created tool dns_lookup: version 1, status pending_approval\nIt waits for a person's approval: toolcage tools approve dns_lookup\n" {
		t.Errorf("%v", r)
	}
	if tool := showTool(t, sock, "dns_lookup"); tool.Status != "pending_approval" || tool.CreatedBy != "llm" || tool.Version != 1 {
		t.Errorf("stored %+v", tool)
	}
	// An llm's tool that writes no approval asks for each call (issue #10):
	// the stored definition shows that default.
	if !sameJSON(t, stored("dns_lookup"), parsed(dnsYAML+"approval: ask\n")) {
		t.Errorf("stored %s, want %s", stored("dns_lookup"), parsed(dnsYAML+"approval: ask\n"))
	}
	// The same permission from a person starts active; from an llm any
	// permission waits for a person (issue #10: only bare JavaScript from
	// an llm starts active).
	fsTool := jsDef("fs_user", "return 1", "permissions: [filesystem]")
	if tool := createTool(t, sock, fsTool); tool.Status != "active" || tool.CreatedBy != "user" {
		t.Errorf("user's filesystem tool: %+v", tool)
	}
	if tool := createTool(t, sock, jsDef("llm_plain", "return 1", "permissions: [network]")+"  allowed_domains: [api.example.com]\n", "--caller-type", "llm"); tool.Status != "pending_approval" || tool.CreatedBy != "llm" {
		t.Errorf("llm's network tool: %+v", tool)
	}
	if tool := createTool(t, sock, strings.Replace(fsTool, "fs_user", "fs_llm", 1), "--caller-type", "llm"); tool.Status != "pending_approval" {
		t.Errorf("llm's filesystem tool: %+v", tool)
	}

	// --json prints the daemon's answer: the tool.
	r = tcIn(t, sock, jsDef("json_out", "return 1"), "tools", "create", "-f", "-", "--json")
	tool := decodeStrict[api.Tool](t, r.out)
	if r.code != exitOK || tool.Status != "active" || tool.Version != 1 || tool.CreatedBy != "user" || !strings.HasPrefix(r.out, "{\n  \"definition\": {\n") ||
		tool.CreatedAt.IsZero() || !sameJSON(t, tool.Definition, parsed(jsDef("json_out", "return 1"))) {
		t.Errorf("%v", r)
	}

	// The daemon's refusals.
	r = tcIn(t, sock, addYAML, "tools", "create", "-f", "-")
	wantExit(t, r, exitFailure, `Error: a tool named "add_numbers" already exists (conflict)`)
	r = tcIn(t, sock, jsDef("evil", "return eval('1')"), "tools", "create", "-f", "-")
	wantExit(t, r, exitRefused, `Error: forbidden pattern "eval(" at line 1`, "(policy_denied)")
	if r := tc(t, sock, "tools", "show", "evil"); r.code != exitFailure {
		t.Errorf("refused tool stored: %v", r)
	}
	// A file the CLI refuses never reaches the daemon.
	r = tcIn(t, sock, "name: Bad\nkind: js\n", "tools", "create", "-f", "-")
	wantExit(t, r, exitUsage, "Error: invalid tool definition in stdin (invalid_definition)")
	if list := decodeStrict[api.ToolList](t, mustOK(t, sock, "tools", "list", "--json").out); list.Total != 7 {
		t.Errorf("%d tools, want 7", list.Total)
	}
}

// listFixture fills a daemon with tools of every status, kind and creator:
//
//	a_user_js       js     Math Tools  user  active
//	b_llm_js        js     Math Tools  llm   active
//	c_llm_pending   js     Math Tools  llm   pending_approval
//	d_user_shell    shell  Network     user  active
//	e_llm_disabled  js     Math Tools  llm   disabled
//	f_llm_rejected  js     Other       llm   rejected
func listFixture(t *testing.T, sock string) {
	t.Helper()
	math := "category: Math Tools"
	createTool(t, sock, jsDef("a_user_js", "return 1", math))
	// An llm's tool asks for each call unless it writes otherwise.
	createTool(t, sock, jsDef("b_llm_js", "return 2", math, "approval: preApproved"), "--caller-type", "llm")
	createTool(t, sock, jsDef("c_llm_pending", "return 3", math, "permissions: [filesystem]"), "--caller-type", "llm")
	createTool(t, sock, strings.Replace(dnsYAML, "name: dns_lookup", "name: d_user_shell", 1))
	createTool(t, sock, jsDef("e_llm_disabled", "return 5", math), "--caller-type", "llm")
	mustOK(t, sock, "tools", "disable", "e_llm_disabled")
	createTool(t, sock, jsDef("f_llm_rejected", "return 6", "category: Other", "permissions: [email]"), "--caller-type", "llm")
	mustOK(t, sock, "tools", "reject", "f_llm_rejected")
}

func TestToolsList(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	// An empty catalog.
	if r := mustOK(t, sock, "tools", "list", "--json"); r.out != "{\n  \"tools\": [],\n  \"total\": 0\n}\n" {
		t.Errorf("empty --json: %q", r.out)
	}
	if r := mustOK(t, sock, "tools", "list"); r.out != "NAME   KIND   STATUS   VERSION   CATEGORY   CREATED_BY   USES\n" || r.err != "" {
		t.Errorf("empty list: %v", r)
	}

	listFixture(t, sock)
	all := []string{"a_user_js", "b_llm_js", "c_llm_pending", "d_user_shell", "e_llm_disabled", "f_llm_rejected"}
	tests := []struct {
		flags []string
		want  []string
		total int // 0: len(want)
	}{
		{nil, all, 0},
		{[]string{"--status", "active"}, []string{"a_user_js", "b_llm_js", "d_user_shell"}, 0},
		{[]string{"--status", "disabled"}, []string{"e_llm_disabled"}, 0},
		{[]string{"--status", "pending_approval"}, []string{"c_llm_pending"}, 0},
		{[]string{"--status", "rejected"}, []string{"f_llm_rejected"}, 0},
		{[]string{"--kind", "js"}, []string{"a_user_js", "b_llm_js", "c_llm_pending", "e_llm_disabled", "f_llm_rejected"}, 0},
		{[]string{"--kind", "shell"}, []string{"d_user_shell"}, 0},
		{[]string{"--kind", "http"}, []string{}, 0},
		{[]string{"--category", "Math Tools"}, []string{"a_user_js", "b_llm_js", "c_llm_pending", "e_llm_disabled"}, 0},
		{[]string{"--category", "Network"}, []string{"d_user_shell"}, 0},
		{[]string{"--category", "Nothing"}, []string{}, 0},
		{[]string{"--created-by", "llm"}, []string{"b_llm_js", "c_llm_pending", "e_llm_disabled", "f_llm_rejected"}, 0},
		{[]string{"--created-by", "user"}, []string{"a_user_js", "d_user_shell"}, 0},
		{[]string{"--status", "active", "--kind", "js", "--category", "Math Tools", "--created-by", "llm", "--limit", "5", "--offset", "0"}, []string{"b_llm_js"}, 0},
		{[]string{"--status", "active", "--created-by", "user"}, []string{"a_user_js", "d_user_shell"}, 0},
		{[]string{"--limit", "2"}, all[:2], 6},
		{[]string{"--limit", "2", "--offset", "2"}, all[2:4], 6},
		{[]string{"--offset", "4"}, all[4:], 6},
		{[]string{"--offset", "10"}, []string{}, 6},
		{[]string{"--created-by", "llm", "--limit", "1", "--offset", "1"}, []string{"c_llm_pending"}, 4},
	}
	for _, tt := range tests {
		r := mustOK(t, sock, append([]string{"tools", "list", "--json"}, tt.flags...)...)
		list := decodeStrict[api.ToolList](t, r.out)
		names := []string{}
		for _, tool := range list.Tools {
			names = append(names, summarize(tool.Definition).Name)
		}
		total := tt.total
		if total == 0 {
			total = len(tt.want)
		}
		if !slices.Equal(names, tt.want) || list.Total != total {
			t.Errorf("tools list %v: %v (total %d), want %v (total %d)", tt.flags, names, list.Total, tt.want, total)
		}
	}
	// Each tool's state is listed as stored.
	list := decodeStrict[api.ToolList](t, mustOK(t, sock, "--json", "tools", "ls", "--kind", "shell").out)
	if len(list.Tools) != 1 || list.Tools[0].Status != "active" || list.Tools[0].CreatedBy != "user" || list.Tools[0].Version != 1 || list.Tools[0].CreatedAt.IsZero() {
		t.Errorf("global --json with ls: %+v", list)
	}

	// The table, and a note on stderr when a page hides tools.
	mustOK(t, sock, "call", "a_user_js")
	r := mustOK(t, sock, "tools", "list", "--status", "active")
	want := "NAME           KIND    STATUS   VERSION   CATEGORY     CREATED_BY   USES\n" +
		"a_user_js      js      active   1         Math Tools   user         1\n" +
		"b_llm_js       js      active   1         Math Tools   llm          0\n" +
		"d_user_shell   shell   active   1         Network      user         0\n"
	if r.out != want || r.err != "" {
		t.Errorf("table:\n%s\nwant:\n%s\nstderr %q", r.out, want, r.err)
	}
	r = mustOK(t, sock, "tools", "ls", "--limit", "2", "--offset", "1")
	if lines := strings.Split(r.out, "\n"); len(lines) != 4 || !strings.HasPrefix(lines[1], "b_llm_js ") || !strings.HasPrefix(lines[2], "c_llm_pending ") ||
		r.err != "Showing 2 of 6 tools; see --limit and --offset.\n" {
		t.Errorf("paged table: %v", r)
	}
}

func TestToolsShow(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	created := createTool(t, sock, dnsYAML)

	r := mustOK(t, sock, "tools", "show", "dns_lookup")
	at := formatTime(created.CreatedAt, time.Local)
	want := "Name:        dns_lookup\n" +
		"Description: Look up DNS records for a domain\n" +
		"Kind:        shell\n" +
		"Status:      active\n" +
		"Version:     1\n" +
		"Category:    Network\n" +
		"Permissions: network, shell\n" +
		"Secrets:     -\n" +
		"Approval:    preApproved\n" +
		"Isolation:   default\n" +
		"Created by:  user\n" +
		"Uses:        0\n" +
		"Last used:   never\n" +
		"Created:     " + at + "\n" +
		"Updated:     " + at + "\n" +
		"\nDefinition:\n  name: dns_lookup\n  description: Look up DNS records for a domain\n  kind: shell\n"
	if !strings.HasPrefix(r.out, want) || r.err != "" {
		t.Errorf("show:\n%s\nwant prefix:\n%s", r.out, want)
	}
	if r2 := mustOK(t, sock, "tools", "inspect", "dns_lookup"); r2.out != r.out {
		t.Errorf("inspect differs from show:\n%s", r2.out)
	}

	// --json is the daemon's tool; -d --json only its definition.
	tool := decodeStrict[api.Tool](t, mustOK(t, sock, "tools", "show", "dns_lookup", "--json").out)
	if tool.Status != "active" || tool.Version != 1 || !tool.CreatedAt.Equal(created.CreatedAt) || !sameJSON(t, tool.Definition, created.Definition) {
		t.Errorf("show --json: %+v", tool)
	}
	r = mustOK(t, sock, "tools", "show", "-d", "--json", "dns_lookup")
	if !strings.HasPrefix(r.out, "{\n  \"name\": \"dns_lookup\",\n") || !sameJSON(t, []byte(r.out), created.Definition) {
		t.Errorf("show -d --json: %q", r.out)
	}

	// --definition prints YAML that makes the same tool again.
	for _, def := range []string{dnsYAML, addYAML} {
		name := strings.TrimPrefix(strings.SplitN(def, "\n", 2)[0], "name: ")
		if name == "add_numbers" {
			createTool(t, sock, def)
		}
		before := mustOK(t, sock, "tools", "show", name, "--definition", "--json").out
		y := mustOK(t, sock, "tools", "show", name, "--definition").out
		if name == "dns_lookup" && !strings.HasPrefix(y, "name: dns_lookup\ndescription: Look up DNS records for a domain\nkind: shell\n") {
			t.Errorf("show --definition:\n%s", y)
		}
		mustOK(t, sock, "tools", "delete", name)
		r := mustOK(t, sock, "tools", "create", "-f", writeFile(t, name+".yaml", y))
		if r.out != "Created tool "+name+": version 1, status active\n" {
			t.Errorf("re-create: %v", r)
		}
		if after := mustOK(t, sock, "tools", "show", name, "--definition", "--json").out; after != before {
			t.Errorf("%s changed on the round trip:\n%s\n%s", name, before, after)
		}
	}
	if r := mustOK(t, sock, "call", "add_numbers", "--arg", "a=1", "--arg", "b=2"); r.out != "{\n  \"sum\": 3,\n  \"label\": \"yes\"\n}\n" {
		t.Errorf("call of the re-created tool: %v", r)
	}

	// Use shows up.
	tool = showTool(t, sock, "add_numbers")
	r = mustOK(t, sock, "tools", "show", "add_numbers")
	if tool.UsageCount != 1 || tool.LastUsedAt == nil || !strings.Contains(r.out, "\nUses:        1\nLast used:   "+formatTime(*tool.LastUsedAt, time.Local)+"\n") {
		t.Errorf("after a call: %+v\n%s", tool, r.out)
	}

	wantExit(t, tc(t, sock, "tools", "show", "nope"), exitFailure, `Error: no tool named "nope" (tool_not_found)`)
	wantExit(t, tc(t, sock, "tools", "show", "a/b c"), exitFailure, `Error: no tool named "a/b c" (tool_not_found)`)
}

// TestShowDefinitionYAML11 edits a tool through 'show --definition' and
// 'update -f' when its strings are words YAML 1.1 reads as something else:
// the definition must come back the same, not with a property "true" or an
// enum of booleans.
func TestShowDefinitionYAML11(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	def := `{"name": "light", "description": "no", "kind": "js", "category": "on",
  "parameters": {"type": "object", "required": ["y"], "properties": {
    "x": {"type": "number"}, "y": {"type": "number"}, "n": {"type": "string"},
    "state": {"type": "string", "enum": ["on", "off", "yes", "no", "y", "n", "1:20", "0x1F", "~", "null", "12", ""]}}},
  "js": {"code": "return [args.y, args.state]"}}`
	mustOK(t, sock, "tools", "create", "-f", writeFile(t, "light.json", def))
	before := mustOK(t, sock, "tools", "show", "light", "--definition", "--json").out

	y := mustOK(t, sock, "tools", "show", "light", "--definition").out
	r := mustOK(t, sock, "tools", "update", "light", "-f", writeFile(t, "light.yaml", y))
	if r.out != "Updated tool light: version 1, status active\n" {
		t.Errorf("update with the shown definition changed the tool: %v\n%s", r, y)
	}
	mustOK(t, sock, "tools", "delete", "light")
	mustOK(t, sock, "tools", "create", "-f", writeFile(t, "light2.yaml", y))
	if after := mustOK(t, sock, "tools", "show", "light", "--definition", "--json").out; after != before {
		t.Errorf("the shown YAML makes a different tool:\n%s\nfrom:\n%s", after, y)
	}
	if r := mustOK(t, sock, "call", "light", "--arg", "y=2", "--arg", "state=off"); r.out != "[\n  2,\n  \"off\"\n]\n" {
		t.Errorf("call: %v", r)
	}
}

func TestToolsUpdate(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, addYAML)
	v2 := strings.Replace(addYAML, "args.a + args.b", "args.a * args.b", 1)

	r := tcIn(t, sock, v2, "tools", "update", "add_numbers", "-f", "-")
	if r.code != exitOK || r.out != "Updated tool add_numbers: version 2, status active\n" {
		t.Errorf("update: %v", r)
	}
	r = mustOK(t, sock, "call", "add_numbers", "--arg", "a=3", "--arg", "b=4")
	if r.out != "{\n  \"sum\": 12,\n  \"label\": \"yes\"\n}\n" || !strings.Contains(r.err, " · v2 · ") {
		t.Errorf("call after update: %v", r)
	}
	// The same definition again changes nothing.
	r = mustOK(t, sock, "tools", "update", "add_numbers", "-f", writeFile(t, "v2.yaml", v2))
	if r.out != "Updated tool add_numbers: version 2, status active\n" {
		t.Errorf("no-op update: %v", r)
	}
	// --json prints the tool.
	v3 := strings.Replace(v2, "description: Add two numbers", "description: Multiply two numbers", 1)
	r = tcIn(t, sock, v3, "tools", "update", "add_numbers", "-f", "-", "--json")
	if tool := decodeStrict[api.Tool](t, r.out); r.code != exitOK || tool.Version != 3 || summarize(tool.Definition).Description != "Multiply two numbers" {
		t.Errorf("update --json: %v", r)
	}

	// A file naming another tool is refused before the daemon is asked.
	r = tcIn(t, sock, dnsYAML, "tools", "update", "add_numbers", "-f", "-")
	wantExit(t, r, exitUsage, `Error: the definition in stdin is named "dns_lookup", not "add_numbers" (tools cannot be renamed) (invalid_definition)`)
	// The daemon's refusals.
	wantExit(t, tcIn(t, sock, strings.Replace(addYAML, "add_numbers", "missing", 1), "tools", "update", "missing", "-f", "-"),
		exitFailure, `Error: no tool named "missing" (tool_not_found)`)
	wantExit(t, tcIn(t, sock, addYAML, "--caller-type", "llm", "tools", "update", "add_numbers", "-f", "-"),
		exitRefused, `Error: an llm may not change the user's tool "add_numbers" (forbidden)`)
	if h := decodeStrict[api.ToolHistory](t, mustOK(t, sock, "tools", "history", "add_numbers", "--json").out); h.Current != 3 || len(h.Versions) != 3 {
		t.Errorf("refused updates changed the tool: %+v", h)
	}

	// An llm changing its own tool to hold a dangerous permission sends it
	// back for approval.
	mine := jsDef("mine", "return 1")
	createTool(t, sock, mine, "--caller-type", "llm")
	r = tcIn(t, sock, strings.Replace(mine, "kind: js\n", "kind: js\npermissions: [shell]\n", 1), "--caller-type", "llm", "tools", "update", "mine", "-f", "-")
	if r.code != exitOK || r.out != "Updated tool mine: version 2, status pending_approval\nIt waits for a person's approval: toolcage tools approve mine\n" {
		t.Errorf("llm update: %v", r)
	}
}

func TestToolsLifecycle(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, jsDef("plain", "return 'ran'"))
	// preApproved written: an approved llm tool otherwise asks per call.
	danger := jsDef("risky", "return 'ran'", "permissions: [filesystem]", "approval: preApproved")
	createTool(t, sock, danger, "--caller-type", "llm")
	createTool(t, sock, strings.ReplaceAll(danger, "risky", "doomed"), "--caller-type", "llm")

	steps := []struct {
		args     []string
		wantCode int
		wantOut  string // exact stdout
		wantErr  string
		status   string // of the tool afterwards
	}{
		{[]string{"tools", "disable", "plain"}, 0, "Disabled tool plain: version 1, status disabled\n", "", "disabled"},
		{[]string{"call", "plain"}, exitRefused, "", "(tool_not_active)", "disabled"},
		{[]string{"tools", "disable", "plain"}, 0, "Disabled tool plain: version 1, status disabled\n", "", "disabled"},
		{[]string{"tools", "approve", "plain"}, exitFailure, "", `Error: cannot approve tool "plain": it is disabled (conflict)`, "disabled"},
		{[]string{"tools", "enable", "plain"}, 0, "Enabled tool plain: version 1, status active\n", "", "active"},
		{[]string{"call", "plain"}, 0, "\"ran\"\n", "", "active"},

		{[]string{"call", "risky"}, exitRefused, "", `Error: tool "risky" is pending_approval; only active tools run (tool_not_active)`, "pending_approval"},
		{[]string{"--caller-type", "llm", "tools", "approve", "risky"}, exitRefused, "", "Error: only a person may approve a tool (forbidden)", "pending_approval"},
		{[]string{"tools", "enable", "risky"}, exitFailure, "", `Error: cannot enable tool "risky": it is pending_approval (conflict)`, "pending_approval"},
		{[]string{"tools", "approve", "risky"}, 0, "Approved tool risky: version 1, status active\n", "", "active"},
		{[]string{"call", "risky"}, 0, "\"ran\"\n", "", "active"},

		{[]string{"--caller-type", "llm", "tools", "reject", "doomed"}, exitRefused, "", "Error: only a person may reject a tool (forbidden)", "pending_approval"},
		{[]string{"tools", "reject", "doomed"}, 0, "Rejected tool doomed: version 1, status rejected\n", "", "rejected"},
		{[]string{"tools", "enable", "doomed"}, exitFailure, "", "(conflict)", "rejected"},
		{[]string{"tools", "approve", "doomed"}, exitFailure, "", `Error: cannot approve tool "doomed": it is rejected (conflict)`, "rejected"},
		{[]string{"call", "doomed"}, exitRefused, "", "(tool_not_active)", "rejected"},

		{[]string{"tools", "enable", "nope"}, exitFailure, "", `Error: no tool named "nope" (tool_not_found)`, ""},
	}
	for _, s := range steps {
		r := tc(t, sock, s.args...)
		if r.code != s.wantCode || r.out != s.wantOut || !strings.Contains(r.err, s.wantErr) {
			t.Errorf("toolcage %s: %v\nwant exit %d, stdout %q, stderr with %q", strings.Join(s.args, " "), r, s.wantCode, s.wantOut, s.wantErr)
		}
		if s.status != "" {
			name := s.args[len(s.args)-1]
			if got := showTool(t, sock, name).Status; got != s.status {
				t.Errorf("after toolcage %s: %s is %s, want %s", strings.Join(s.args, " "), name, got, s.status)
			}
		}
	}
	// --json prints the changed tool.
	for _, s := range [][2]string{{"disable", "disabled"}, {"enable", "active"}} {
		r := mustOK(t, sock, "tools", s[0], "plain", "--json")
		if tool := decodeStrict[api.Tool](t, r.out); tool.Status != s[1] || summarize(tool.Definition).Name != "plain" {
			t.Errorf("%s --json: %+v", s[0], tool)
		}
	}
}

func TestToolsDelete(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, jsDef("gone", "return 1"))
	createTool(t, sock, jsDef("agents", "return 1"), "--caller-type", "llm")
	mustOK(t, sock, "call", "gone")

	wantExit(t, tc(t, sock, "--caller-type", "llm", "tools", "delete", "gone"), exitRefused,
		`Error: an llm may not delete the user's tool "gone"; a person must delete it (forbidden)`)
	showTool(t, sock, "gone")

	if r := mustOK(t, sock, "tools", "delete", "gone"); r.out != "Deleted tool gone\n" || r.err != "" {
		t.Errorf("delete: %v", r)
	}
	wantExit(t, tc(t, sock, "tools", "show", "gone"), exitFailure, "(tool_not_found)")
	wantExit(t, tc(t, sock, "call", "gone"), exitFailure, "(tool_not_found)")
	wantExit(t, tc(t, sock, "tools", "rm", "gone"), exitFailure, `Error: no tool named "gone" (tool_not_found)`)
	// Its calls stay in the audit log.
	if recs := audit(t, sock, "gone"); len(recs) != 1 || recs[0].Outcome != "ok" {
		t.Errorf("audit of a deleted tool: %+v", recs)
	}

	// An llm deletes its own tool; --json prints nothing (204).
	// (An llm confirms a delete: --confirm.)
	if r := mustOK(t, sock, "--caller-type", "llm", "tools", "rm", "agents", "--confirm", "--json"); r.out != "" || r.err != "" {
		t.Errorf("delete --json: %v", r)
	}
	if list := decodeStrict[api.ToolList](t, mustOK(t, sock, "tools", "list", "--json").out); list.Total != 0 {
		t.Errorf("tools left: %+v", list)
	}
}

func TestToolsHistoryAndRollback(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	v1 := jsDef("versioned", "return 'one'")
	createTool(t, sock, v1)
	mustOK(t, sock, "tools", "update", "versioned", "-f", writeFile(t, "v2.yaml", jsDef("versioned", "return 'two'")))
	mustOK(t, sock, "tools", "update", "versioned", "-f", writeFile(t, "v3.yaml", jsDef("versioned", "return 'three'")))

	r := mustOK(t, sock, "tools", "history", "versioned")
	rows := regexp.MustCompile(`(?m)^([0-9]+) +[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}( +\*)?$`).FindAllStringSubmatch(r.out, -1)
	if !strings.HasPrefix(r.out, "VERSION   CREATED               CURRENT\n") || len(rows) != 3 ||
		rows[0][1] != "1" || rows[1][1] != "2" || rows[2][1] != "3" || rows[0][2] != "" || rows[1][2] != "" || rows[2][2] == "" {
		t.Errorf("history:\n%s", r.out)
	}

	r = mustOK(t, sock, "tools", "rollback", "versioned", "--to", "1")
	if r.out != "Rolled back tool versioned: version 4, status active\n" {
		t.Errorf("rollback: %v", r)
	}
	if r := mustOK(t, sock, "call", "versioned"); r.out != "\"one\"\n" || !strings.Contains(r.err, " · v4 · ") {
		t.Errorf("call after rollback: %v", r)
	}
	h := decodeStrict[api.ToolHistory](t, mustOK(t, sock, "tools", "history", "versioned", "--json").out)
	if h.Tool != "versioned" || h.Current != 4 || len(h.Versions) != 4 || h.Versions[3].Version != 4 || !sameJSON(t, h.Versions[3].Definition, h.Versions[0].Definition) ||
		sameJSON(t, h.Versions[1].Definition, h.Versions[0].Definition) || h.Versions[0].CreatedAt.IsZero() {
		t.Errorf("history --json: %+v", h)
	}
	// --to=N and --json; the tool is printed as it is now.
	r = mustOK(t, sock, "tools", "rollback", "versioned", "--to=2", "--json")
	if tool := decodeStrict[api.Tool](t, r.out); tool.Version != 5 || tool.Status != "active" {
		t.Errorf("rollback --json: %+v", tool)
	}
	if r := mustOK(t, sock, "call", "versioned"); r.out != "\"two\"\n" {
		t.Errorf("call after second rollback: %v", r)
	}

	wantExit(t, tc(t, sock, "tools", "rollback", "versioned", "--to", "9"), exitUsage, `Error: tool "versioned" has no version 9 (invalid_request)`)
	wantExit(t, tc(t, sock, "tools", "rollback", "versioned", "--to", "5"), exitFailure, `Error: tool "versioned" is already at version 5 (conflict)`)
	wantExit(t, tc(t, sock, "--caller-type", "llm", "tools", "rollback", "versioned", "--to", "1"), exitRefused, "(forbidden)")
	wantExit(t, tc(t, sock, "tools", "rollback", "nope", "--to", "1"), exitFailure, "(tool_not_found)")
	wantExit(t, tc(t, sock, "tools", "history", "nope"), exitFailure, `Error: no tool named "nope" (tool_not_found)`)
	if tool := showTool(t, sock, "versioned"); tool.Version != 5 {
		t.Errorf("refused rollbacks changed the tool: %+v", tool)
	}
}

func TestToolsStats(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	if r := mustOK(t, sock, "tools", "stats"); !strings.HasPrefix(r.out, "Tools:              0\n") {
		t.Errorf("empty stats:\n%s", r.out)
	}
	listFixture(t, sock)
	mustOK(t, sock, "call", "a_user_js")
	mustOK(t, sock, "call", "a_user_js")
	mustOK(t, sock, "call", "b_llm_js")
	mustOK(t, sock, "js", "--code", "return 1")

	r := mustOK(t, sock, "tools", "stats")
	want := "Tools:              6\n" +
		"  active:           3\n" +
		"  disabled:         1\n" +
		"  pending approval: 1\n" +
		"  rejected:         1\n" +
		"Created by user:    2\n" +
		"Created by llm:     4\n" +
		"Uses:               3\n" +
		"Executions:         4\n"
	if r.out != want {
		t.Errorf("stats:\n%s\nwant:\n%s", r.out, want)
	}
	s := decodeStrict[api.Stats](t, mustOK(t, sock, "tools", "stats", "--json").out)
	if s != (api.Stats{Total: 6, Active: 3, Disabled: 1, PendingApproval: 1, Rejected: 1, CreatedByUser: 2, CreatedByLLM: 4, TotalUsage: 3, Executions: 4}) {
		t.Errorf("stats --json: %+v", s)
	}
}

func TestJS(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	adHoc := regexp.MustCompile(`^call c[0-9a-f]{16} · [0-9.]+ ms\n$`)

	r := mustOK(t, sock, "js", "--code", "return 6 * 7")
	if r.out != "42\n" || !adHoc.MatchString(r.err) {
		t.Errorf("js --code: %v", r)
	}
	r = mustOK(t, sock, "js", "-c", "console.log('n is', args.n); return args.n * 2", "--args-json", `{"n": 21}`)
	if r.out != "42\n" || !strings.HasPrefix(r.err, "log: n is 21\ncall c") {
		t.Errorf("js --args-json: %v", r)
	}
	if r := tcIn(t, sock, `{"n": 4}`, "js", "--code", "return args.n + 1", "--args-json", "-"); r.code != 0 || r.out != "5\n" {
		t.Errorf("js --args-json -: %v", r)
	}
	file := writeFile(t, "double.js", "// doubles n\nconst n = args.n;\nreturn {double: n * 2};\n")
	if r := mustOK(t, sock, "js", "--file", file, "--args-json", `{"n": 8}`); r.out != "{\n  \"double\": 16\n}\n" {
		t.Errorf("js --file: %v", r)
	}
	if r := tcIn(t, sock, "return [1, 'two', null]", "js", "-f", "-"); r.code != 0 || r.out != "[\n  1,\n  \"two\",\n  null\n]\n" {
		t.Errorf("js -f -: %v", r)
	}

	// --timeout reaches the daemon: an endless loop stops long before the
	// default 30s.
	start := time.Now()
	r = tc(t, sock, "js", "--code", "while(true){}", "--timeout", "200ms")
	wantExit(t, r, exitFailure, "200ms", "(timeout)")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("a 200ms timeout took %v", took)
	}
	timedOut := callIDOf(t, r)
	// So does --memory: 20 MiB fits the default 64 MiB, not 16 MiB.
	big := "return 'x'.repeat(20 << 20).length"
	if r := mustOK(t, sock, "js", "--code", big); r.out != "20971520\n" {
		t.Errorf("20 MiB string: %v", r)
	}
	wantExit(t, tc(t, sock, "js", "--code", big, "--memory", "16MiB"), exitFailure, "(limit_exceeded)")

	// Failures and refusals.
	r = tc(t, sock, "js", "--code", "\nthrow new Error('broken')")
	wantExit(t, r, exitFailure, "Error: the code reported an error: Error: broken (line 2)")
	if r.out != "" {
		t.Errorf("stdout %q", r.out)
	}
	wantExit(t, tc(t, sock, "js", "--code", "return eval('1')"), exitRefused, `Error: forbidden pattern "eval(" at line 1`, "(policy_denied)")
	wantExit(t, tc(t, sock, "js", "--code", "return 1", "--args-json", "[1]"), exitUsage, "--args-json must be a JSON object")
	wantExit(t, tc(t, sock, "js", "--file", "/nonexistent/x.js"), exitUsage, "/nonexistent/x.js: no such file or directory")

	// --json prints the daemon's answer; ad-hoc runs are audited as "js:adhoc".
	r = tc(t, sock, "--caller-id", "tester", "js", "--code", "return 'hi'", "--json")
	resp := decodeStrict[api.CallResponse](t, r.out)
	if r.code != exitOK || string(resp.Result) != `"hi"` || resp.Tool != "js:adhoc" || resp.Version != 0 || resp.IsError || resp.CallID == "" {
		t.Errorf("js --json: %v", r)
	}
	recs := audit(t, sock, "js:adhoc")
	if len(recs) != 11 || recs[0].ID != resp.CallID || recs[0].CallerID != "tester" || recs[0].Outcome != "ok" {
		t.Fatalf("audit of js: %+v", recs)
	}
	for _, e := range recs {
		if e.ID == timedOut && (e.Outcome != "failed" || e.ErrorCode != "timeout" || e.Limit != "timeout") {
			t.Errorf("timed-out run recorded as %+v", e)
		}
	}
}

func TestAudit(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, jsDef("echo", "return args"))
	createTool(t, sock, jsDef("other", "return 1"))
	// Three calls of echo by different callers, one of other, oldest first.
	mustOK(t, sock, "--caller-id", "alice", "call", "echo", "--arg", "n=1")
	mustOK(t, sock, "call", "other")
	mustOK(t, sock, "--caller-type", "llm", "--caller-id", "agent", "call", "echo", "--arg", "n=2")
	mustOK(t, sock, "call", "echo", "--arg", "n=3")

	all := audit(t, sock, "")
	if len(all) != 4 {
		t.Fatalf("audit: %+v", all)
	}
	echo := audit(t, sock, "echo")
	if len(echo) != 3 {
		t.Fatalf("audit --tool echo: %+v", echo)
	}
	for i, want := range []struct{ n, typ, id string }{{"3", "user", fmt.Sprintf("uid:%d", os.Getuid())}, {"2", "llm", "agent"}, {"1", "user", "alice"}} {
		e := echo[i]
		if e.Tool != "echo" || e.Version != 1 || e.Outcome != "ok" || e.CallerType != want.typ || e.CallerID != want.id ||
			!sameJSON(t, e.Arguments, []byte(`{"n":"`+want.n+`"}`)) || e.StartedAt.IsZero() || e.FinishedAt.Before(e.StartedAt) {
			t.Errorf("record %d: %+v, want n=%s by %s:%s", i, e, want.n, want.typ, want.id)
		}
	}

	// --limit and --offset page newest first.
	page := func(args ...string) []string {
		l := decodeStrict[api.ExecutionList](t, mustOK(t, sock, append([]string{"audit", "--json"}, args...)...).out)
		ids := []string{}
		for _, e := range l.Executions {
			ids = append(ids, e.ID)
		}
		return ids
	}
	ids := func(es []api.Execution) []string {
		out := []string{}
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--tool", "echo", "--limit", "1"}, ids(echo[:1])},
		{[]string{"--tool", "echo", "--limit", "1", "--offset", "1"}, ids(echo[1:2])},
		{[]string{"--tool", "echo", "--offset", "2"}, ids(echo[2:])},
		{[]string{"--limit", "2"}, ids(all[:2])},
		{[]string{"--tool", "nope"}, []string{}},
	} {
		if got := page(tt.args...); !slices.Equal(got, tt.want) {
			t.Errorf("audit %v: %v, want %v", tt.args, got, tt.want)
		}
	}

	// The table.
	r := mustOK(t, sock, "audit", "--tool", "echo", "--limit", "2")
	lines := strings.Split(strings.TrimSuffix(r.out, "\n"), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ID TOOL VER CALLER OUTCOME CODE DURATION STARTED" {
		t.Fatalf("audit table:\n%s", r.out)
	}
	for i, caller := range []string{"user:uid:" + fmt.Sprint(os.Getuid()), "llm:agent"} {
		f := strings.Fields(lines[i+1])
		if len(f) != 10 || f[0] != echo[i].ID || f[1] != "echo" || f[2] != "1" || f[3] != caller || f[4] != "ok" || f[5] != "-" || f[7] != "ms" ||
			f[8]+" "+f[9] != formatTime(echo[i].StartedAt, time.Local) {
			t.Errorf("audit row %d: %q", i, lines[i+1])
		}
	}
	// A refusal shows its code.
	tc(t, sock, "call", "echo", "--args-json", "{}")
	mustOK(t, sock, "tools", "disable", "echo")
	tc(t, sock, "call", "echo")
	r = mustOK(t, sock, "audit", "--limit", "1")
	if f := strings.Fields(strings.Split(r.out, "\n")[1]); len(f) < 6 || f[4] != "refused" || f[5] != "tool_not_active" {
		t.Errorf("refusal row: %q", r.out)
	}
}

func TestHealthAndVersion(t *testing.T) {
	t.Parallel()
	ld := launchDaemon(t, nil)
	sock := ld.socket

	r := mustOK(t, sock, "health")
	if !regexp.MustCompile(`^Status:   ok\nVersion:  `+regexp.QuoteMeta(daemon.Version)+`\nUptime:   [0-9hms]+\nSocket:   `+regexp.QuoteMeta(sock)+`\nData dir: `+regexp.QuoteMeta(ld.dataDir)+`\n$`).MatchString(r.out) || r.err != "" {
		t.Errorf("health: %v", r)
	}
	h := decodeStrict[api.Health](t, mustOK(t, sock, "health", "--json").out)
	if h.Status != "ok" || h.Socket != sock || h.DataDir != ld.dataDir || h.Version != daemon.Version || h.UptimeSeconds < 0 {
		t.Errorf("health --json: %+v", h)
	}

	r = mustOK(t, sock, "version")
	if !regexp.MustCompile(`^Client: toolcage ` + regexp.QuoteMeta(daemon.Version) + ` \(go[0-9.]+[^ ]* [a-z0-9]+/[a-z0-9]+\)\nDaemon: toolcage ` + regexp.QuoteMeta(daemon.Version) + ` \(up [0-9hms]+\)\n$`).MatchString(r.out) {
		t.Errorf("version: %v", r)
	}
	v := decodeStrict[versionInfo](t, mustOK(t, sock, "--json", "version").out)
	if v.Client.Version != daemon.Version || v.Daemon != nil && v.Daemon.Version != v.Client.Version || v.Client.Go == "" || v.Daemon == nil || v.Daemon.Status != "ok" || v.Daemon.Socket != sock {
		t.Errorf("version --json: %+v", v)
	}
}

// TestJSONOutput: every command's --json (before or after the command name)
// prints one indented JSON value of the API's shape, and nothing on stderr.
func TestJSONOutput(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, jsDef("j", "return 1"))
	createTool(t, sock, jsDef("k", "return 1", "permissions: [shell]"), "--caller-type", "llm")
	createTool(t, sock, jsDef("k2", "return 1", "permissions: [shell]"), "--caller-type", "llm")
	file := writeFile(t, "j2.yaml", jsDef("j", "return 2"))
	tool := func(ok func(api.Tool) bool) func(t *testing.T, out string) {
		return func(t *testing.T, out string) {
			if v := decodeStrict[api.Tool](t, out); !ok(v) {
				t.Errorf("%+v", v)
			}
		}
	}
	// Each command runs twice, --json after it and then before it; the
	// second run of a command that changes something sees the first's work.
	tests := []struct {
		args  []string
		stdin string
		check func(t *testing.T, out string)
		again string // when set, the second run fails with this code instead
	}{
		{[]string{"tools", "create", "-f", "-"}, jsDef("new_tool", "return 1"), tool(func(v api.Tool) bool { return v.Version == 1 }), `{"error":{"code":"conflict",`},
		{[]string{"tools", "list"}, "", func(t *testing.T, out string) {
			if v := decodeStrict[api.ToolList](t, out); v.Total != 4 || len(v.Tools) != 4 {
				t.Errorf("%+v", v)
			}
		}, ""},
		{[]string{"tools", "show", "j"}, "", tool(func(v api.Tool) bool { return summarize(v.Definition).Name == "j" }), ""},
		{[]string{"tools", "update", "j", "-f", file}, "", tool(func(v api.Tool) bool { return v.Version == 2 }), ""},
		{[]string{"tools", "disable", "j"}, "", tool(func(v api.Tool) bool { return v.Status == "disabled" }), ""},
		{[]string{"tools", "enable", "j"}, "", tool(func(v api.Tool) bool { return v.Status == "active" }), ""},
		{[]string{"tools", "approve", "k"}, "", tool(func(v api.Tool) bool { return v.Status == "active" }), ""},
		{[]string{"tools", "reject", "k2"}, "", tool(func(v api.Tool) bool { return v.Status == "rejected" }), ""},
		{[]string{"tools", "rollback", "j", "--to", "1"}, "", tool(func(v api.Tool) bool { return v.Version == 3 }), ""},
		{[]string{"tools", "history", "j"}, "", func(t *testing.T, out string) {
			if v := decodeStrict[api.ToolHistory](t, out); v.Current != 3 || len(v.Versions) != 3 {
				t.Errorf("%+v", v)
			}
		}, ""},
		{[]string{"tools", "stats"}, "", func(t *testing.T, out string) {
			if v := decodeStrict[api.Stats](t, out); v.Total != 4 || v.Rejected != 1 {
				t.Errorf("%+v", v)
			}
		}, ""},
		{[]string{"call", "j"}, "", func(t *testing.T, out string) {
			if v := decodeStrict[api.CallResponse](t, out); string(v.Result) != "1" || v.Version != 3 {
				t.Errorf("%+v", v)
			}
		}, ""},
		{[]string{"js", "--code", "return 2"}, "", func(t *testing.T, out string) {
			if v := decodeStrict[api.CallResponse](t, out); string(v.Result) != "2" {
				t.Errorf("%+v", v)
			}
		}, ""},
		{[]string{"audit"}, "", func(t *testing.T, out string) {
			if v := decodeStrict[api.ExecutionList](t, out); len(v.Executions) == 0 {
				t.Errorf("%+v", v)
			}
		}, ""},
		{[]string{"health"}, "", func(t *testing.T, out string) {
			if v := decodeStrict[api.Health](t, out); v.Status != "ok" {
				t.Errorf("%+v", v)
			}
		}, ""},
		{[]string{"version"}, "", func(t *testing.T, out string) {
			if v := decodeStrict[versionInfo](t, out); v.Daemon == nil {
				t.Errorf("%+v", v)
			}
		}, ""},
		{[]string{"tools", "delete", "new_tool"}, "", func(t *testing.T, out string) {
			if out != "" { // 204 No Content
				t.Errorf("%q", out)
			}
		}, `{"error":{"code":"tool_not_found",`},
	}
	for _, tt := range tests {
		for _, args := range [][]string{append(slices.Clone(tt.args), "--json"), append([]string{"--json"}, tt.args...)} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				r := tcIn(t, sock, tt.stdin, args...)
				if args[0] == "--json" && tt.again != "" {
					wantExit(t, r, exitFailure, tt.again)
					if r.out != "" {
						t.Errorf("stdout %q", r.out)
					}
					return
				}
				if r.code != exitOK || r.err != "" {
					t.Fatalf("%v", r)
				}
				tt.check(t, r.out)
			})
		}
	}
}

// TestDaemonCommand runs "toolcage daemon" as a process of its own, uses it
// with the CLI, and stops it as a service manager would.
func TestDaemonCommand(t *testing.T) {
	t.Parallel()
	sockDir, err := os.MkdirTemp("", "tc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "d.sock")
	data := t.TempDir()
	profile := filepath.Join(t.TempDir(), "cpu.pprof")

	// start runs the daemon until stop sends it sig; local puts --socket
	// after "daemon", as its usage line shows, instead of before it.
	start := func(local bool) (stop func(sig os.Signal) result) {
		var out, errb testutil.SyncBuffer
		args := []string{"--socket", sock, "daemon"}
		if local {
			args = []string{"daemon", "--socket", sock}
		}
		cmd := cliProcess(&out, &errb, append(args, "--data-dir", data, "--executor", executorPath, "--log-level", "error",
			"--cpu-profile", profile)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() {
			cmd.Wait()
			close(exited)
		}()
		var once sync.Once
		var last result
		stop = func(sig os.Signal) result {
			once.Do(func() {
				cmd.Process.Signal(sig)
				select {
				case <-exited:
				case <-time.After(30 * time.Second):
					t.Errorf("daemon did not stop within 30s of %v", sig)
					cmd.Process.Kill()
					<-exited
				}
				last = result{code: cmd.ProcessState.ExitCode(), out: out.String(), err: errb.String()}
			})
			return last
		}
		t.Cleanup(func() { stop(syscall.SIGTERM) })
		deadline := time.Now().Add(20 * time.Second)
		for tc(t, sock, "health").code != exitOK {
			select {
			case <-exited:
				t.Fatalf("daemon exited: %v", stop(syscall.SIGTERM))
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("daemon did not answer within 20s: %v", stop(syscall.SIGTERM))
			}
			time.Sleep(20 * time.Millisecond)
		}
		return stop
	}

	stop := start(false)
	h := decodeStrict[api.Health](t, mustOK(t, sock, "health", "--json").out)
	if h.Status != "ok" || h.Socket != sock || h.DataDir != data {
		t.Errorf("health: %+v", h)
	}
	createTool(t, sock, jsDef("kept", "return args.x * 2", "parameters: {type: object, properties: {x: {type: number}}}"))
	if r := tc(t, sock, "call", "kept", "--arg", "x=21"); r.out != "42\n" {
		t.Errorf("call: %v", r)
	}
	// A second daemon on the same socket is refused.
	r := tc(t, sock, "daemon", "--data-dir", t.TempDir(), "--executor", executorPath, "--log-level", "error")
	wantExit(t, r, exitFailure, "Error: another daemon is already listening on "+sock)

	// SIGTERM: the daemon drains, cleans up and exits 0.
	if r := stop(syscall.SIGTERM); r.code != exitOK || r.out != "" {
		t.Errorf("daemon stopped with %v", r)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
	wantExit(t, tc(t, sock, "health"), exitFailure, "cannot reach the toolcage daemon")

	// The tool and its call outlive a restart; SIGINT stops it as well.
	stop = start(true)
	if tool := showTool(t, sock, "kept"); tool.UsageCount != 1 {
		t.Errorf("after restart: %+v", tool)
	}
	if recs := audit(t, sock, "kept"); len(recs) != 1 || recs[0].Outcome != "ok" {
		t.Errorf("audit after restart: %+v", recs)
	}
	if r := stop(os.Interrupt); r.code != exitOK {
		t.Errorf("daemon stopped by SIGINT with %v", r)
	}
	// --cpu-profile left a (gzipped) pprof profile.
	if b, err := os.ReadFile(profile); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("cpu profile: %v (%d bytes)", err, len(b))
	}

	// A bad configuration is a usage error, before anything starts.
	other := t.TempDir()
	r = runCLI(t, "", "--socket", other+"/x.sock", "daemon", "--data-dir", other, "--log-level", "loud")
	wantExit(t, r, exitUsage, `Error: config: log.level: unknown level "loud"`)
	r = runCLI(t, "", "--socket", other+"/x.sock", "daemon", "--config", "/nonexistent/toolcage.yaml")
	wantExit(t, r, exitUsage, "Error: config: ")
	if _, err := os.Stat(other + "/x.sock"); !os.IsNotExist(err) {
		t.Errorf("a refused daemon left a socket: %v", err)
	}
}

// TestToolsShowMissingSecrets: required_api_keys (the OwnPilot name) is
// read as secrets, and show says which are not set.
func TestToolsShowMissingSecrets(t *testing.T) {
	sock := startDaemon(t)
	createTool(t, sock, "name: weather_js\ndescription: weather\nkind: js\nrequired_api_keys:\n  - {name: weatherapi, displayName: WeatherAPI, docsUrl: 'https://www.weatherapi.com'}\njs: {code: 'return 1'}\n")
	r := mustOK(t, sock, "tools", "show", "weather_js")
	if !strings.Contains(r.out, "Secrets:     weatherapi (missing: weatherapi;") {
		t.Fatalf("show:\n%s", r.out)
	}
	if r := tcIn(t, sock, "k-123456789", "secrets", "set", "weatherapi"); r.code != 0 {
		t.Fatalf("secrets set: %+v", r)
	}
	r = mustOK(t, sock, "tools", "show", "weather_js")
	if !strings.Contains(r.out, "Secrets:     weatherapi\n") {
		t.Fatalf("show after set:\n%s", r.out)
	}
}
