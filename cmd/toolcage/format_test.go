package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
)

// TestFormatAndOutput: --format runs a Go template over the objects --json
// prints (once per item of a list), -o json is --json, -o table the
// default, and bad values are usage errors.
func TestFormatAndOutput(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, jsDef("alpha", "return 1"))
	createTool(t, sock, jsDef("beta", "return 2", "permissions: [secrets]", "approval: ask"))
	mustOK(t, sock, "call", "alpha")

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"list, one line per tool", []string{"tools", "list", "--format", "{{.definition.name}} {{.status}} {{.definition.approval}}"}, "alpha active preApproved\nbeta active ask\n"},
		{"show, once", []string{"tools", "show", "alpha", "--format", "{{.definition.name}} v{{.version}} used {{.usage_count}}"}, "alpha v1 used 1\n"},
		{"json func", []string{"tools", "show", "beta", "--format", "{{json .definition.permissions}}"}, "[\"secrets\"]\n"},
		{"join, upper", []string{"tools", "show", "beta", "--format", "{{upper (join \",\" .definition.permissions)}}"}, "SECRETS\n"},
		{"audit", []string{"audit", "--format", "{{.tool}} {{.outcome}}"}, "alpha ok\n"},
		{"history", []string{"tools", "history", "alpha", "--format", "{{.version}}"}, "1\n"},
		{"flag before the verb", []string{"tools", "list", "--format={{.definition.name}}", "--kind", "js"}, "alpha\nbeta\n"},
	}
	for _, tt := range tests {
		if r := tc(t, sock, tt.args...); r.code != exitOK || r.out != tt.want || r.err != "" {
			t.Errorf("%s: %v\nwant stdout %q", tt.name, r, tt.want)
		}
	}

	// -o json and --format json print exactly what --json prints; -o table
	// what no flag prints.
	for _, args := range [][]string{{"tools", "list"}, {"tools", "show", "alpha"}, {"audit", "--tool", "alpha"}, {"secrets", "list"}, {"approvals", "list"}, {"tools", "stats"}} {
		js := mustOK(t, sock, append(args, "--json")...).out
		for _, alt := range [][]string{{"-o", "json"}, {"--output", "json"}, {"--format", "json"}} {
			if got := mustOK(t, sock, append(args, alt...)...).out; got != js {
				t.Errorf("%v %v:\n%s\nwant\n%s", args, alt, got, js)
			}
		}
		table := mustOK(t, sock, args...).out
		if got := mustOK(t, sock, append(args, "-o", "table")...).out; got != table {
			t.Errorf("%v -o table:\n%s\nwant\n%s", args, got, table)
		}
	}

	for _, bad := range []struct {
		args []string
		err  string
	}{
		{[]string{"tools", "list", "-o", "yaml"}, `-o must be json or table, not "yaml"`},
		{[]string{"tools", "list", "--format", "{{.name"}, "--format: "},
		{[]string{"tools", "list", "--format", "{{.name}}", "--json"}, "--format TEMPLATE goes alone"},
		{[]string{"tools", "list", "--format", "{{nosuchfunc .}}"}, `function "nosuchfunc" not defined`},
		{[]string{"tools", "show", "alpha", "--format", "{{index .definition 3}}"}, "--format: "},
	} {
		wantExit(t, tc(t, sock, bad.args...), exitUsage, bad.err)
	}
}

// TestJSONErrors: with --json (or -o json, --format json), an error is one
// JSON line on stderr shaped as the API's: {"error": {"code", "message"}}.
func TestJSONErrors(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	tests := []struct {
		name string
		args []string
		exit int
		code string
		msg  string
	}{
		{"daemon's error", []string{"tools", "show", "nope", "--json"}, exitFailure, "tool_not_found", "nope"},
		{"daemon's error, -o json", []string{"tools", "show", "nope", "-o", "json"}, exitFailure, "tool_not_found", "nope"},
		{"global --json", []string{"--json", "tools", "show", "nope"}, exitFailure, "tool_not_found", "nope"},
		{"usage error", []string{"tools", "show", "--json"}, exitUsage, "invalid_request", "missing the tool NAME"},
		{"unknown flag", []string{"tools", "list", "--bogus", "--json"}, exitUsage, "invalid_request", "unknown flag --bogus"},
		{"bad -o", []string{"tools", "list", "-o", "xml", "--format", "json"}, exitUsage, "invalid_request", "-o must be json or table"},
		{"refused", []string{"call", "nope", "--json"}, exitFailure, "tool_not_found", ""},
	}
	for _, tt := range tests {
		r := tc(t, sock, tt.args...)
		if r.code != tt.exit || strings.Count(r.err, "\n") != 1 {
			t.Errorf("%s: %v", tt.name, r)
			continue
		}
		var body api.ErrorBody
		dec := json.NewDecoder(strings.NewReader(r.err))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil || string(body.Error.Code) != tt.code || !strings.Contains(body.Error.Message, tt.msg) {
			t.Errorf("%s: stderr %q: %v", tt.name, r.err, err)
		}
	}
	r := runCLI(t, "", "--socket", noSocket(t), "health", "--json")
	if r.code != exitFailure || !strings.HasPrefix(r.err, `{"error":{"code":"unavailable","message":"cannot reach the toolcage daemon at `) {
		t.Errorf("no daemon: %v", r)
	}
	// Without JSON asked for, errors stay lines for people.
	wantExit(t, tc(t, sock, "tools", "show", "nope"), exitFailure, "Error: ")
}

// TestEveryJSONCommandHasFormat: each command that takes --json takes
// --format and -o too.
func TestEveryJSONCommandHasFormat(t *testing.T) {
	cliApp := newCLI(&app{})
	n := 0
	var walk func(cs []*cli.Command)
	walk = func(cs []*cli.Command) {
		for _, c := range cs {
			walk(c.Subcommands)
			if hasFlag(c.Flags, "json") {
				n++
				if !hasFlag(c.Flags, "format") || !hasFlag(c.Flags, "o") {
					t.Errorf("%s has --json but not --format and -o", c.Name)
				}
			}
		}
	}
	walk(cliApp.Commands)
	if n < 20 {
		t.Errorf("only %d commands with --json", n)
	}
}
