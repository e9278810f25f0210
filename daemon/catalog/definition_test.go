package catalog

import (
	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/daemon/kind/http"
	"github.com/toolcage/toolcage/daemon/kind/js"
	"github.com/toolcage/toolcage/daemon/kind/shell"
	"github.com/toolcage/toolcage/toolspec"

	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// Realistic definitions, shared with the fuzz seeds.
const (
	jsYAML = `name: add_numbers
description: Add two numbers
kind: js
parameters:
  type: object
  properties:
    a: {type: number}
    b: {type: number}
  required: [a, b]
category: Math
limits: {timeout: 2s, memory: 32MiB}
js:
  code: |
    return args.a + args.b;
`
	shellYAML = `name: dns_lookup
description: Look up DNS records for a domain
kind: shell
parameters:
  type: object
  properties:
    domain: {type: string, pattern: "^[a-z0-9.-]+$"}
    record_type: {type: string, enum: [A, AAAA, MX, TXT]}
  required: [domain]
category: Network
permissions: [network, shell]
secrets: [dns_token]
approval: ask
isolation: docker
limits: {timeout: 10s, memory: 64MiB, output: 1MiB}
shell:
  command: "dig +short {{.record_type}} {{.domain}}"
  env: {TOKEN: "{{secret.dns_token}}"}
  dir: /tmp
`
	httpYAML = `name: weather
description: Forecast for a city
kind: http
category: Web
permissions: [network]
limits: {timeout: 5s, requests: 3}
http:
  method: get
  url: "https://api.example.com/forecast/{{city}}"
  params: {days: "{{days}}"}
  headers: {Accept: application/json}
  allowed_domains: [api.example.com]
  max_response_bytes: 100000
`
	jsJSON    = `{"name":"echo","description":"Echo the input","kind":"js","parameters":{"type":"object","properties":{"text":{"type":"string"}}},"js":{"code":"return args.text"}}`
	shellJSON = `{
  "name": "disk_usage",
  "description": "Disk usage of a path",
  "kind": "shell",
  "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
  "permissions": ["filesystem"],
  "limits": {"timeout": 30, "memory": 67108864, "output": "1MB"},
  "shell": {"command": "du -sh {{.path}}"}
}`
	httpJSON = `{"name":"create_issue","description":"Create an issue","kind":"http","approval":"blocked",
"http":{"method":"POST","url":"https://tracker.example.com/api/issues","headers":{"Authorization":"Bearer {{secret.tracker}}"},
"body":"{\"title\": {{title}}}","allowed_domains":["tracker.example.com"],"max_response_bytes":"64KiB"}}`
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, d *Definition)
	}{
		{"js yaml", jsYAML, func(t *testing.T, d *Definition) {
			eq(t, d.Name, "add_numbers")
			eq(t, d.Kind, toolspec.JS)
			eq(t, specOf[*js.Spec](t, d).Code, "return args.a + args.b;\n")
			eq(t, d.Approval, ApprovalPreApproved) // default
			eq(t, d.Isolation, "")                 // the daemon's default
			eq(t, d.Limits.Timeout, Duration(2*time.Second))
			eq(t, d.Limits.Memory, ByteSize(32<<20))
			eq(t, d.Category, "Math")
		}},
		{"shell yaml", shellYAML, func(t *testing.T, d *Definition) {
			eq(t, d.Kind, toolspec.Shell)
			eq(t, specOf[*shell.Spec](t, d).Command, "dig +short {{.record_type}} {{.domain}}")
			eq(t, specOf[*shell.Spec](t, d).Env["TOKEN"], "{{secret.dns_token}}")
			eq(t, d.Approval, ApprovalAsk)
			eq(t, d.Isolation, IsolationDocker)
			eq(t, strings.Join(d.Permissions, ","), "network,shell")
			eq(t, d.Limits.Output, ByteSize(1<<20))
			eq(t, d.HasDangerousPermission(), true)
		}},
		{"http yaml", httpYAML, func(t *testing.T, d *Definition) {
			eq(t, specOf[*http.Spec](t, d).Method, "GET") // upper-cased
			eq(t, specOf[*http.Spec](t, d).MaxResponseBytes, ByteSize(100000))
			eq(t, d.Limits.Requests, 3)
			// Generated from the {{vars}}: path vars required, params optional.
			eq(t, string(d.Parameters), `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"string"}},"required":["city"]}`)
			eq(t, d.HasPermission("network"), true)
		}},
		{"js json", jsJSON, func(t *testing.T, d *Definition) {
			eq(t, d.Name, "echo")
			eq(t, specOf[*js.Spec](t, d).Code, "return args.text")
		}},
		{"shell json", shellJSON, func(t *testing.T, d *Definition) {
			eq(t, d.Limits.Timeout, Duration(30*time.Second))
			eq(t, d.Limits.Memory, ByteSize(64<<20))
			eq(t, d.Limits.Output, ByteSize(1000*1000))
			eq(t, d.ExecutorLimits().Timeout, 30*time.Second)
		}},
		{"http json", httpJSON, func(t *testing.T, d *Definition) {
			eq(t, d.Approval, ApprovalBlocked)
			eq(t, specOf[*http.Spec](t, d).MaxResponseBytes, ByteSize(64<<10))
			eq(t, specOf[*http.Spec](t, d).Body, `{"title": {{title}}}`)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.check(t, d)
			// ParseJSON on the marshalled form gives the same definition.
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			d2, err := ParseJSON(b)
			if err != nil {
				t.Fatalf("ParseJSON(%s): %v", b, err)
			}
			b2, _ := json.Marshal(d2)
			eq(t, string(b2), string(b))
		})
	}
}

func TestParseProblems(t *testing.T) {
	// base is a valid js definition; each case changes one thing.
	base := map[string]any{
		"name": "ok_tool", "description": "A tool", "kind": "js",
		"js": map[string]any{"code": "return 1"},
	}
	with := func(kv ...any) string {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name  string
		in    string
		field string // a problem with this field is expected
		msg   string // and this text in the error
	}{
		{"empty", "", "", "definition is empty"},
		{"blank", " \n\t", "", "definition is empty"},
		{"too large", "name: x\ndescription: " + strings.Repeat("a", MaxDefinitionBytes), "", "larger than"},
		{"not yaml", "name: [unclosed", "", "not valid YAML or JSON"},
		{"not an object", "- a\n- b", "", "bad definition"},
		{"missing name", with("name", nil), "name", "is required"},
		{"bad name upper", with("name", "Bad"), "name", "must match"},
		{"bad name dash", with("name", "my-tool"), "name", "must match"},
		{"bad name digit first", with("name", "1tool"), "name", "must match"},
		{"long name", with("name", strings.Repeat("a", MaxNameLen+1)), "name", "longer than 64"},
		{"missing description", with("description", nil), "description", "is required"},
		{"blank description", with("description", "  "), "description", "is required"},
		{"missing kind", with("kind", nil, "js", nil), "kind", "is required"},
		{"unknown kind", with("kind", "python", "js", nil), "kind", `unknown kind "python"`},
		{"unknown field", with("timeout", "5s"), "", `unknown field "timeout"`},
		{"unknown nested field", with("js", map[string]any{"code": "1", "lang": "ts"}), "", `unknown field "lang"`},
		{"unknown field yaml", "name: a\ndescription: d\nkind: js\njs: {code: '1'}\nlimit: {timeout: 1s}\n", "", `unknown field "limit"`},
		{"block for wrong kind", with("shell", map[string]any{"command": "ls"}), "shell", "block given for a js tool"},
		{"missing js.code", with("js", nil), "js.code", "is required"},
		{"blank js.code", with("js", map[string]any{"code": " "}), "js.code", "is required"},
		{"missing shell.command", with("kind", "shell", "js", nil, "shell", map[string]any{"command": ""}), "shell.command", "is required"},
		{"missing http", with("kind", "http", "js", nil), "http", "is required"},
		{"bad http method", with("kind", "http", "js", nil, "http", map[string]any{"method": "TRACE", "url": "https://x", "allowed_domains": []string{"x"}}), "http.method", "unknown method"},
		{"missing http url", with("kind", "http", "js", nil, "http", map[string]any{"method": "GET", "allowed_domains": []string{"x"}}), "http.url", "is required"},
		{"missing allowed_domains", with("kind", "http", "js", nil, "http", map[string]any{"method": "GET", "url": "https://x"}), "http.allowed_domains", "is required"},
		{"parameters not an object", with("parameters", []any{1}), "parameters", "must be a JSON Schema object"},
		{"parameters string", with("parameters", "object"), "parameters", "must be a JSON Schema object"},
		{"parameters not type object", with("parameters", map[string]any{"type": "string"}), "parameters", `"type": "object"`},
		{"parameters invalid schema", with("parameters", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "strnig"}}}), "parameters", "not a valid JSON Schema"},
		{"parameters bad minimum", with("parameters", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"minimum": "one"}}}), "parameters", "not a valid JSON Schema"},
		{"parameters $ref to a file", with("parameters", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "file:///etc/passwd"}}}), "parameters", `failing loading "file:///etc/passwd"`},
		{"parameters $ref to a url", with("parameters", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "https://example.com/s.json"}}}), "parameters", `failing loading "https://example.com/s.json"`},
		{"parameters $schema file", with("parameters", map[string]any{"$schema": "file:///etc/passwd", "type": "object"}), "parameters", `failing loading "file:///etc/passwd"`},
		{"unknown permission", with("permissions", []string{"root"}), "permissions", `unknown permission "root"`},
		{"bad secret name", with("secrets", []string{"My-Secret"}), "secrets", "must match"},
		{"bad approval", with("approval", "always"), "approval", `unknown approval "always"`},
		{"bad isolation", with("isolation", "vm"), "isolation", `unknown isolation "vm"`},
		{"negative timeout", with("limits", map[string]any{"timeout": "-5s"}), "limits", "must not be negative"},
		{"negative memory", with("limits", map[string]any{"memory": -1}), "limits", "must not be negative"},
		{"negative requests", with("limits", map[string]any{"requests": -3}), "limits", "must not be negative"},
		{"negative timeout number", with("limits", map[string]any{"timeout": -1}), "", "out of range"},
		{"timeout over 24h", with("limits", map[string]any{"timeout": "25h"}), "limits.timeout", "longer than 24h"},
		{"bad duration", with("limits", map[string]any{"timeout": "ten seconds"}), "", "bad duration"},
		{"bad duration type", with("limits", map[string]any{"timeout": true}), "", "bad duration"},
		{"bad size unit", with("limits", map[string]any{"memory": "64 parsecs"}), "", "bad size"},
		{"bad size fraction number", with("limits", map[string]any{"memory": 1.5}), "", "bad size"},
		{"size too large", with("limits", map[string]any{"memory": "99999999999GiB"}), "", "too large"},
		{"two yaml documents", jsYAML + "---\n" + shellYAML, "", "more than one document"},
		{"two json objects", jsJSON + "\n" + httpJSON, "", "trailing data"},
		{"stray bracket after json", jsJSON + "]", "", "trailing data"},
		{"duplicate key", jsYAML + "name: other\n", "", `key "name" given twice`},
		{"many problems at once", with("name", "Bad", "description", nil, "approval", "x"), "approval", "description: is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", d)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T %v is not a *ValidationError", err, err)
			}
			if !strings.HasPrefix(err.Error(), "invalid tool definition: ") {
				t.Errorf("error %q lacks the prefix", err)
			}
			if tt.msg != "" && !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			if tt.field != "" {
				found := false
				for _, p := range ve.Problems {
					found = found || p.Field == tt.field
				}
				if !found {
					t.Errorf("no problem for field %q in %+v", tt.field, ve.Problems)
				}
			}
		})
	}
}

func TestParseJSONTrailingData(t *testing.T) {
	for _, in := range []string{jsJSON + `]`, jsJSON + ` {}`, jsJSON + `x`} {
		if d, err := ParseJSON([]byte(in)); err == nil {
			t.Errorf("ParseJSON(%q) = %+v, want trailing data error", in, d)
		}
	}
	if _, err := ParseJSON([]byte(jsJSON + "\n")); err != nil {
		t.Errorf("trailing newline refused: %v", err)
	}
}

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"64MiB", 64 << 20, false},
		{"1MB", 1000 * 1000, false},
		{"1 mb", 1000 * 1000, false},
		{"512k", 512 << 10, false}, // Docker's meaning since issue #15; was 512000
		{"1.5KiB", 1536, false},
		{"100000", 100000, false},
		{"2GiB", 2 << 30, false},
		{"10b", 10, false},
		{"", 0, true},
		{"MiB", 0, true},
		{"64XB", 0, true},
		{"1.2.3", 0, true},
		{"-1MiB", 0, true},
		{"99999999999GiB", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseByteSize(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{`"10s"`, 10 * time.Second, false},
		{`"1m30s"`, 90 * time.Second, false},
		{`"250ms"`, 250 * time.Millisecond, false},
		{`10`, 10 * time.Second, false},
		{`0.5`, 500 * time.Millisecond, false},
		{`"10"`, 0, true},
		{`"soon"`, 0, true},
		{`-1`, 0, true},
		{`1e300`, 0, true},
		{`[]`, 0, true},
	}
	for _, tt := range tests {
		var d Duration
		err := json.Unmarshal([]byte(tt.in), &d)
		if (err != nil) != tt.err || (!tt.err && time.Duration(d) != tt.want) {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v, err %v", tt.in, time.Duration(d), err, tt.want, tt.err)
		}
	}
	b, _ := json.Marshal(Duration(90 * time.Second))
	eq(t, string(b), `"1m30s"`)
	b, _ = json.Marshal(ByteSize(64 << 20))
	eq(t, string(b), `67108864`)
}

func eq[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestParseDocumentMarkers(t *testing.T) {
	for _, in := range []string{"---\n" + jsYAML, jsYAML + "...\n", jsYAML + "---\n", jsYAML + "---\n# nothing here\n"} {
		if _, err := Parse([]byte(in)); err != nil {
			t.Errorf("Parse(%q): %v", in, err)
		}
	}
}

// specOf returns d's kind block as a T.
func specOf[T kind.Spec](t *testing.T, d *Definition) T {
	t.Helper()
	s, ok := d.Spec.(T)
	if !ok {
		t.Fatalf("block %T, want %T", d.Spec, *new(T))
	}
	return s
}

func TestMountsInDefinitions(t *testing.T) {
	def, err := Parse([]byte("name: m\ndescription: d\nkind: shell\npermissions: [filesystem]\nmounts: [{path: /srv/a}, {path: /srv/b, readonly: false}]\nshell: {command: ls}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(def.Mounts) != 2 || !def.Mounts[0].ReadOnly || def.Mounts[1].ReadOnly {
		t.Fatalf("mounts %+v: read-only unless written false", def.Mounts)
	}
	b, _ := json.Marshal(def)
	again, err := ParseJSON(b)
	if err != nil || len(again.Mounts) != 2 || !again.Mounts[0].ReadOnly || again.Mounts[1].ReadOnly {
		t.Fatalf("round trip %s: %+v %v", b, again, err)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"mounts: [{path: /srv/a}]\nshell: {command: ls}\n", "filesystem permission"},
		{"permissions: [filesystem]\nmounts: [{path: relative}]\nshell: {command: ls}\n", "mounts[0].path"},
		{"permissions: [filesystem]\nmounts: [{path: /tmp/x}]\nshell: {command: ls}\n", "overlaps the sandbox's own /tmp"},
		{"permissions: [filesystem]\nmounts: [{path: /workspace}]\nshell: {command: ls}\n", "/workspace"},
		{"permissions: [filesystem]\nmounts: [{path: /srv/a}, {path: /srv/a}]\nshell: {command: ls}\n", "mounted twice"},
		{"permissions: [filesystem]\nmounts: [{path: /srv/a, mode: rw}]\nshell: {command: ls}\n", "unknown field"},
		{"permissions: [filesystem]\nmounts: [" + strings.Repeat("{path: /srv/a},", MaxMounts+1) + "]\nshell: {command: ls}\n", "more than 16"},
	} {
		_, err := Parse([]byte("name: m\ndescription: d\nkind: shell\n" + tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.yaml, err, tt.want)
		}
	}
	// The toolset-only kinds are refused by hand, accepted from a toolset.
	fsDef := []byte(`{"name":"rf","description":"d","kind":"fs","permissions":["filesystem"],"fs":{"op":"read_file"}}`)
	if _, err := ParseJSON(fsDef); err == nil || !strings.Contains(err.Error(), "exists only in the built-in filesystem toolset") {
		t.Errorf("kind fs by hand: %v", err)
	}
	if _, err := ParseToolsetJSON(fsDef); err != nil {
		t.Errorf("kind fs from a toolset: %v", err)
	}
	if _, err := ParseJSON(fsDef); err == nil || !strings.Contains(err.Error(), "(toolsets: {filesystem: {}})") {
		t.Errorf("kind fs by hand names the switch: %v", err)
	}
	// The meta kind's tools are the meta-tools, which agent_tools turns on.
	metaDef := []byte(`{"name":"lister","description":"d","kind":"meta","meta":{"op":"list_custom_tools"}}`)
	if _, err := ParseJSON(metaDef); err == nil || !strings.Contains(err.Error(), "(agent_tools: {meta_tools: true})") {
		t.Errorf("kind meta by hand: %v", err)
	}
}
