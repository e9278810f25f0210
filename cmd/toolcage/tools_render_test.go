package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/policy/template"
)

// getItemYAML is an http tool on localhost. Rendering checks the URL's host
// against allowed_domains only; the addresses are checked when a call
// connects, so no allow_private_hosts is needed here.
const getItemYAML = `name: get_item
description: Fetch an item
kind: http
parameters:
  type: object
  properties:
    id: {type: string}
    q: {type: string}
    n: {type: integer}
  required: [id]
http:
  method: POST
  url: "http://localhost:8080/items/{{id}}?q={{q}}"
  headers: {X-Trace: "t-{{id}}", Accept: application/json}
  body: '{"n": {{n}}, "note": "item {{id}}"}'
  allowed_domains: [localhost]
`

// lookupYAML is an http tool with no body, whose URL is a GET.
const lookupYAML = `name: lookup
description: Look something up
kind: http
parameters:
  type: object
  properties:
    term: {type: string}
  required: [term]
http:
  method: GET
  url: "https://api.example.com/search"
  params: {q: "{{term}}"}
  allowed_domains: [api.example.com]
`

// cleanYAML is a shell tool whose renderings the deny rules can refuse.
const cleanYAML = `name: clean
description: Remove a directory
kind: shell
parameters:
  type: object
  properties:
    path: {type: string}
  required: [path]
shell:
  command: "rm -rf {{path}} && echo done"
`

// gitLogYAML is a shell tool that sets its environment: a render shows it.
const gitLogYAML = `name: git_log
description: Show the log
kind: shell
parameters:
  type: object
  properties:
    who: {type: string}
  required: [who]
shell:
  command: "git log --author={{who}}"
  env: {GIT_PAGER: cat, GREETING: "hi {{who}}"}
`

func TestToolsRender(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	for _, def := range []string{dnsYAML, getItemYAML, lookupYAML, cleanYAML, addYAML, gitLogYAML} {
		createTool(t, sock, def)
	}
	mustOK(t, sock, "tools", "disable", "lookup")

	tests := []struct {
		name    string
		args    []string // after "tools render"
		stdin   string
		code    int
		out     string   // exact stdout
		wantErr []string // in stderr
	}{
		{name: "shell tool, argv", args: []string{"dns_lookup", "--arg", "domain=example.com", "--arg", "record_type=MX"},
			out: "argv: [\"dig\",\"+short\",\"MX\",\"example.com\"]\n"},
		{name: "an injection value stays one argv element", args: []string{"dns_lookup", "--arg", "record_type=A", "--arg", "domain=example.com; rm -rf / $(id)"},
			out: "argv: [\"dig\",\"+short\",\"A\",\"example.com; rm -rf / $(id)\"]\n"},
		{name: "--args-json", args: []string{"dns_lookup", "--args-json", `{"domain": "example.org", "record_type": "TXT"}`},
			out: "argv: [\"dig\",\"+short\",\"TXT\",\"example.org\"]\n"},
		{name: "--args-json from stdin", args: []string{"dns_lookup", "--args-json", "-"}, stdin: `{"domain": "example.org", "record_type": "A"}`,
			out: "argv: [\"dig\",\"+short\",\"A\",\"example.org\"]\n"},
		{name: "shell tool with env: the environment is shown first", args: []string{"git_log", "--arg", "who=bob"},
			out: "env: {\"GIT_PAGER\":\"cat\",\"GREETING\":\"hi bob\"}\nargv: [\"git\",\"log\",\"--author=bob\"]\n"},
		{name: "shell tool, sh -c", args: []string{"clean", "--arg", "path=/tmp/it's here"},
			out: "shell: rm -rf '/tmp/it'\\''s here' && echo done\n"},
		{name: "http tool", args: []string{"get_item", "--arg", "id=a b/c", "--arg", "q=x&y=z", "--arg", "n=7"},
			out: "POST http://localhost:8080/items/a%20b%2Fc?q=x%26y%3Dz\nAccept: application/json\nContent-Type: application/json\nX-Trace: t-a b/c\n\n{\"n\": 7, \"note\": \"item a b/c\"}\n"},
		{name: "http tool, GET with params; a disabled tool renders", args: []string{"lookup", "--arg", "term=go & rust"},
			out: "GET https://api.example.com/search?q=go+%26+rust\n"},
		{name: "option injection exits 3", args: []string{"dns_lookup", "--arg", "domain=--upload-file=/etc/passwd", "--arg", "record_type=A"}, code: exitRefused,
			wantErr: []string{`Error: argument "domain": starts with "-"`, "(policy_denied)"}},
		{name: "a denied rendering exits 3", args: []string{"clean", "--arg", "path=/"}, code: exitRefused,
			wantErr: []string{"Error: denied by shell rule destructive_file_ops/rm_recursive_critical: ", "(policy_denied)"}},
		{name: "a refused URL path exits 3", args: []string{"get_item", "--arg", "id=.."}, code: exitRefused, wantErr: []string{"(policy_denied)"}},
		{name: "schema refusal with --arg exits 2 before the daemon", args: []string{"get_item", "--arg", "id=1", "--arg", "n=many"}, code: exitUsage,
			wantErr: []string{`Error: argument "n": "many" is not a number (invalid_arguments)`}},
		{name: "schema refusal by the daemon exits 2", args: []string{"get_item", "--args-json", `{"n": 1}`}, code: exitUsage,
			wantErr: []string{"(invalid_arguments)"}},
		{name: "a js tool has nothing to render", args: []string{"add_numbers", "--arg", "a=1", "--arg", "b=2"}, code: exitUsage,
			wantErr: []string{"Error: js tools have no template to render (invalid_request)"}},
		{name: "unknown tool exits 1", args: []string{"nope"}, code: exitFailure, wantErr: []string{`Error: no tool named "nope" (tool_not_found)`}},
		{name: "--arg with --args-json exits 2", args: []string{"clean", "--arg", "path=x", "--args-json", "{}"}, code: exitUsage,
			wantErr: []string{"--arg and --args-json cannot be used together"}},
		{name: "no NAME exits 2", args: []string{}, code: exitUsage, wantErr: []string{"Error: missing the tool NAME"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tcIn(t, sock, tt.stdin, append([]string{"tools", "render"}, tt.args...)...)
			wantExit(t, r, tt.code, tt.wantErr...)
			if r.out != tt.out {
				t.Errorf("stdout %q, want %q", r.out, tt.out)
			}
			if tt.code == exitOK && r.err != "" {
				t.Errorf("stderr %q", r.err)
			}
		})
	}

	// --json prints the daemon's answer.
	r := mustOK(t, sock, "tools", "render", "dns_lookup", "--arg", "domain=example.com", "--arg", "record_type=A", "--json")
	rend := decodeStrict[daemon.Rendering](t, r.out)
	if rend.Tool != "dns_lookup" || rend.Version != 1 || rend.Kind != "shell" || rend.HTTP != nil || rend.Shell == nil ||
		rend.Shell.Mode != template.ShellModeArgv || strings.Join(rend.Shell.Argv, "|") != "dig|+short|A|example.com" || rend.Shell.Command != "" {
		t.Errorf("shell --json: %+v", rend)
	}
	r = mustOK(t, sock, "--json", "tools", "render", "get_item", "--arg", "id=7")
	rend = decodeStrict[daemon.Rendering](t, r.out)
	if rend.Tool != "get_item" || rend.Kind != "http" || rend.Shell != nil || rend.HTTP == nil || rend.HTTP.Method != "POST" ||
		rend.HTTP.URL != "http://localhost:8080/items/7" || rend.HTTP.Headers["X-Trace"] != "t-7" ||
		!sameJSON(t, rend.HTTP.Body, []byte(`{"n": null, "note": "item 7"}`)) {
		t.Errorf("http --json: %+v", rend)
	}
	// The shell rendering in the daemon's answer is what policy render
	// prints for the same template and arguments.
	pr := policyCLI(t, "", "policy", "render", "--json", "--template", "dig +short {{.record_type}} {{.domain}}",
		"--args-json", `{"domain": "example.com", "record_type": "A"}`)
	r = mustOK(t, sock, "tools", "render", "dns_lookup", "--arg", "domain=example.com", "--arg", "record_type=A", "--json")
	var full struct {
		Shell json.RawMessage `json:"shell"`
	}
	if err := json.Unmarshal([]byte(r.out), &full); err != nil || pr.code != exitOK || !sameJSON(t, full.Shell, []byte(pr.out)) {
		t.Errorf("tools render: %s\npolicy render: %v", full.Shell, pr)
	}

	// Rendering runs nothing and records nothing.
	if recs := audit(t, sock, ""); len(recs) != 0 {
		t.Errorf("audit records: %+v", recs)
	}
	if tool := showTool(t, sock, "dns_lookup"); tool.UsageCount != 0 || tool.LastUsedAt != nil {
		t.Errorf("tool used: %+v", tool)
	}
}
