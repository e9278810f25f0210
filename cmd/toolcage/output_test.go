package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
)

var (
	t0 = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	t1 = t0.Add(26*time.Hour + 5*time.Minute)
)

const dnsYAML = `name: dns_lookup
description: Look up DNS records for a domain
kind: shell
parameters:
  type: object
  properties:
    domain: {type: string, description: "Domain to look up"}
    record_type: {type: string, enum: [A, AAAA, MX, TXT], default: A}
    count: {type: integer, minimum: 1}
  required: [domain]
category: Network
permissions: [shell, network]
limits: {timeout: 10s, memory: 64MiB}
shell:
  command: "dig +short {{.record_type}} {{.domain}}"
`

const addYAML = `name: add_numbers
description: Add two numbers
kind: js
parameters:
  type: object
  properties:
    a: {type: number}
    b: {type: number}
    exact: {type: boolean}
    label: {type: string}
  required: [a, b]
js:
  code: |
    // add them
    const sum = args.a + args.b;
    return {sum: sum, label: "yes"};
`

// definitionJSON is a definition as the daemon serves it.
func definitionJSON(t *testing.T, yamlText string) json.RawMessage {
	t.Helper()
	d, err := catalog.Parse([]byte(yamlText))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fixtureTool(t *testing.T) *api.Tool {
	used := t1
	return &api.Tool{Definition: definitionJSON(t, dnsYAML), Status: "active", CreatedBy: "user", Version: 3, UsageCount: 42, LastUsedAt: &used, CreatedAt: t0, UpdatedAt: t1}
}

func fixtureToolList(t *testing.T) *api.ToolList {
	return &api.ToolList{Total: 2, Tools: []api.Tool{
		*fixtureTool(t),
		{Definition: definitionJSON(t, addYAML), Status: "pending_approval", CreatedBy: "llm", Version: 1, CreatedAt: t0, UpdatedAt: t0},
	}}
}

func TestGoldenOutput(t *testing.T) {
	tests := []struct {
		name  string
		write func(w *bytes.Buffer) error
	}{
		{"tools_list", func(w *bytes.Buffer) error { return writeToolList(w, fixtureToolList(t)) }},
		{"tools_list_empty", func(w *bytes.Buffer) error { return writeToolList(w, &api.ToolList{}) }},
		{"tools_show", func(w *bytes.Buffer) error { return writeToolShow(w, fixtureTool(t), time.UTC) }},
		{"tools_show_js", func(w *bytes.Buffer) error {
			tool := fixtureToolList(t).Tools[1]
			return writeToolShow(w, &tool, time.UTC)
		}},
		{"tools_created", func(w *bytes.Buffer) error { return writeToolChanged(w, "Created", fixtureTool(t)) }},
		{"tools_created_pending", func(w *bytes.Buffer) error {
			tool := fixtureToolList(t).Tools[1]
			return writeToolChanged(w, "Created", &tool)
		}},
		{"tools_history", func(w *bytes.Buffer) error {
			return writeToolHistory(w, &api.ToolHistory{Tool: "dns_lookup", Current: 2, Versions: []api.ToolVersion{
				{Version: 3, CreatedAt: t1}, {Version: 2, CreatedAt: t0.Add(time.Hour)}, {Version: 1, CreatedAt: t0},
			}}, time.UTC)
		}},
		{"tools_stats", func(w *bytes.Buffer) error {
			return writeStats(w, &api.Stats{Total: 12, Active: 8, Disabled: 2, PendingApproval: 1, Rejected: 1, CreatedByUser: 10, CreatedByLLM: 2, TotalUsage: 1234, Executions: 1301})
		}},
		{"audit", func(w *bytes.Buffer) error {
			return writeExecutions(w, &api.ExecutionList{Executions: []api.Execution{
				{ID: "c_01HV3", Tool: "dns_lookup", Version: 3, CallerType: "user", CallerID: "alice", Outcome: "ok", DurationMS: 48.2, StartedAt: t1},
				{ID: "c_01HV2", Tool: "dns_lookup", Version: 3, CallerType: "llm", CallerID: "agent", Worker: "ops", Outcome: "error", ErrorCode: "timeout", DurationMS: 10000.4, StartedAt: t0.Add(time.Hour)},
				{ID: "c_01HV1", Tool: "js", CallerType: "user", Outcome: "denied", ErrorCode: "policy_denied", DurationMS: 0.31, StartedAt: t0},
			}}, time.UTC)
		}},
		{"health", func(w *bytes.Buffer) error {
			return writeHealth(w, &api.Health{Status: "ok", Version: "v0.3.0", UptimeSeconds: 3723.4, Socket: "/run/toolcage/toolcage.sock", DataDir: "/var/lib/toolcage"})
		}},
		{"version", func(w *bytes.Buffer) error {
			return writeVersion(w, &versionInfo{
				Client: clientVersion{Version: "v0.3.0", Go: "go1.26.8", OS: "linux", Arch: "amd64"},
				Daemon: &api.Health{Status: "ok", Version: "v0.3.0", UptimeSeconds: 61},
			}, "/run/toolcage/toolcage.sock")
		}},
		{"version_no_daemon", func(w *bytes.Buffer) error {
			return writeVersion(w, &versionInfo{Client: clientVersion{Version: "dev", Go: "go1.26.8", OS: "linux", Arch: "amd64"}}, "/run/toolcage/toolcage.sock")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(&buf); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, buf.String())
		})
	}
}

func TestGoldenCallResult(t *testing.T) {
	tests := []struct {
		name  string
		resp  api.CallResponse
		color bool
	}{
		{"call_ok", api.CallResponse{
			CallID: "c_01HV3", Tool: "dns_lookup", Version: 3, DurationMS: 48.21,
			Result: json.RawMessage(`{"records":["93.184.215.14"],"ttl":300}`),
			Logs:   []api.LogLine{{Level: "info", Message: "querying example.com"}, {Level: "warn", Message: "slow resolver"}},
		}, false},
		{"call_string_result_color", api.CallResponse{CallID: "c_2", Tool: "hello", Version: 1, DurationMS: 3.14159, Result: json.RawMessage(`"hi there"`)}, true},
		{"call_is_error", api.CallResponse{CallID: "c_3", Tool: "add_numbers", Version: 2, DurationMS: 12, IsError: true, Error: "TypeError: args.a is undefined", Result: json.RawMessage(`null`)}, false},
		{"call_truncated", api.CallResponse{CallID: "c_4", Tool: "cat", Version: 1, DurationMS: 250, Truncated: true, Result: json.RawMessage(`"aaaa"`)}, false},
		{"js_adhoc", api.CallResponse{CallID: "c_5", DurationMS: 7.5, Result: json.RawMessage(`42`)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if err := writeCallResult(&out, &errb, &tt.resp, tt.color); err != nil {
				t.Fatal(err)
			}
			if tt.resp.IsError {
				printError(&errb, toolError(&tt.resp))
			}
			golden(t, tt.name, "--- stdout\n"+out.String()+"--- stderr\n"+errb.String())
		})
	}
}

func TestGoldenErrors(t *testing.T) {
	unreachable := fmt.Errorf("%w at %s: %v", api.ErrDaemonUnreachable, "/run/toolcage/toolcage.sock",
		errors.New(`Get "http://toolcage/v1/tools": dial unix /run/toolcage/toolcage.sock: connect: no such file or directory`))
	_, parseErr := catalog.Parse([]byte("name: Bad-Name\nkind: js\napproval: sometimes\n"))
	cctx := cli.NewContext(&cli.App{Name: "toolcage"}, nil, nil)
	cctx.Command = &cli.Command{Name: "rollback", HelpName: "toolcage tools rollback"}
	errs := []error{
		&api.Error{Status: 404, ErrorDetail: api.ErrorDetail{Code: errdefs.ToolNotFound, Message: `tool "nope" not found`}},
		&api.Error{Status: 403, ErrorDetail: api.ErrorDetail{Code: errdefs.PolicyDenied, Message: `command "rm -rf /" matches deny rule "rm-root"`, CallID: "c_9"}},
		&api.Error{Status: 429, ErrorDetail: api.ErrorDetail{Code: errdefs.RateLimited, Message: "rate limit of 10/min for dns_lookup reached", RetryAfterSeconds: 1.5}},
		&api.Error{Status: 400, ErrorDetail: api.ErrorDetail{Code: errdefs.InvalidDefinition, Message: "invalid tool definition: name: is required; kind: is required", Problems: []api.Problem{{Field: "name", Message: "is required"}, {Field: "kind", Message: "is required (js, shell or http)"}}}},
		&api.Error{Status: 500, ErrorDetail: api.ErrorDetail{Code: errdefs.Internal}},
		unreachable,
		definitionError("tool.yaml", parseErr),
		codedErrorf(errdefs.InvalidArguments, "arguments for dns_lookup: at /count: minimum: got 0, want 1"),
		usageErrorf(cctx, "missing --to VERSION"),
		inputErrorf("tool.yaml: no such file or directory"),
		toolError(&api.CallResponse{Tool: "add_numbers", Error: "boom"}),
		cli.Exit("Error: bad config: unknown key \"sockt\"", 2),
		errors.New("something else"),
	}
	var buf bytes.Buffer
	for _, err := range errs {
		fmt.Fprintf(&buf, "# exit %d\n", exitCode(err))
		printError(&buf, err)
	}
	golden(t, "errors", buf.String())
}

func TestDefinitionYAMLRoundTrips(t *testing.T) {
	for _, y := range []string{dnsYAML, addYAML} {
		def := definitionJSON(t, y)
		out, err := definitionYAML(def)
		if err != nil {
			t.Fatal(err)
		}
		d2, err := catalog.Parse([]byte(out))
		if err != nil {
			t.Fatalf("the YAML shown does not parse back: %v\n%s", err, out)
		}
		b2, _ := json.Marshal(d2)
		if !bytes.Equal(b2, def) {
			t.Errorf("round trip changed the definition:\n%s\n%s", def, b2)
		}
	}
	// Strings that look like other types stay strings.
	out, err := definitionYAML(json.RawMessage(`{"a":"123","b":"true","c":"null","d":"","e":"x: y","f":[1,"2"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "a: \"123\"\nb: \"true\"\nc: \"null\"\nd: \"\"\ne: 'x: y'\nf: [1, \"2\"]\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestFormatMS(t *testing.T) {
	for in, want := range map[float64]string{0: "0.0 ms", 0.31: "0.3 ms", 9.96: "10.0 ms", 10: "10 ms", 48.6: "49 ms", 10000.4: "10000 ms"} {
		if got := formatMS(in); got != want {
			t.Errorf("formatMS(%v) = %q, want %q", in, got, want)
		}
	}
	if got := indent("a\n\nb\n", "  "); got != "  a\n\n  b\n" {
		t.Errorf("indent = %q", got)
	}
	if got := oneLine(" a\n b  c "); got != "a b c" {
		t.Errorf("oneLine = %q", got)
	}
}

// A table cell an agent's call fills is cut at maxCell bytes, at a rune's
// start: at the bound it is whole, one byte over it is cut and says so.
func TestClipCell(t *testing.T) {
	at := strings.Repeat("x", maxCell)
	if got := clipCell(at); got != at {
		t.Errorf("%d bytes: cut", maxCell)
	}
	over := clipCell(at + "y")
	if want := at + "… (1 more bytes: --json)"; over != want {
		t.Errorf("%d bytes: %q", maxCell+1, over[maxCell-5:])
	}
	// A rune across the bound is left out whole.
	got := clipCell(strings.Repeat("x", maxCell-1) + "é" + "z")
	if !utf8.ValidString(got) || !strings.HasPrefix(got, strings.Repeat("x", maxCell-1)+"…") {
		t.Errorf("a rune across the bound: %q", got[maxCell-5:])
	}
}
