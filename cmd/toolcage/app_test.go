package main

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon"
)

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string // in stderr
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown tools verb", []string{"tools", "frobnicate"}, `unknown command "frobnicate"`},
		{"help for unknown command", []string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{"unknown global flag", []string{"--nope", "health"}, "unknown flag --nope"},
		{"unknown command flag", []string{"tools", "list", "--nope"}, "unknown flag --nope"},
		{"bad int flag", []string{"tools", "list", "--limit", "many"}, `invalid value "many" for --limit`},
		{"flag without value", []string{"tools", "create", "-f"}, "flag needs an argument: -f"},
		{"call with --arg and --args-json", []string{"call", "x", "--arg", "a=1", "--args-json", "{}"}, "--arg and --args-json cannot be used together"},
		{"call without name", []string{"call"}, "missing the tool NAME"},
		{"call with two names", []string{"call", "a", "b"}, "want one tool NAME, got 2 arguments"},
		{"call with non-object args-json", []string{"call", "x", "--args-json", "[1]"}, "--args-json must be a JSON object"},
		{"rollback without --to", []string{"tools", "rollback", "x"}, "missing --to VERSION"},
		{"rollback to zero", []string{"tools", "rollback", "x", "--to", "0"}, "--to must be a version number of 1 or more"},
		{"create without -f", []string{"tools", "create"}, "missing -f FILE"},
		{"create with positional file", []string{"tools", "create", "tool.yaml"}, "did you mean -f tool.yaml?"},
		{"create with missing file", []string{"tools", "create", "-f", "/nonexistent/tool.yaml"}, "/nonexistent/tool.yaml: no such file or directory"},
		{"update without name", []string{"tools", "update", "-f", "x.yaml"}, "missing the tool NAME"},
		{"list bad status", []string{"tools", "list", "--status", "on"}, `--status must be one of active, disabled, pending_approval, rejected, not "on"`},
		{"list bad created-by", []string{"tools", "list", "--created-by", "bot"}, "--created-by must be one of user, llm"},
		{"list bad kind", []string{"tools", "list", "--kind", "python"}, "--kind must be one of js, shell, http"},
		{"list negative limit", []string{"tools", "list", "--limit", "-1"}, "--limit must not be negative"},
		{"list extra argument", []string{"tools", "list", "extra"}, `unexpected argument "extra"`},
		{"audit negative offset", []string{"audit", "--offset", "-5"}, "--offset must not be negative"},
		{"js without code", []string{"js"}, "missing --code CODE or --file FILE"},
		{"js with code and file", []string{"js", "--code", "1", "--file", "x.js"}, "--code and --file cannot be used together"},
		{"js bad timeout", []string{"js", "--code", "1", "--timeout", "soon"}, `--timeout "soon" is not a positive duration`},
		{"js bad memory", []string{"js", "--code", "1", "--memory", "lots"}, `--memory "lots" is not a size`},
		{"bad caller type", []string{"--caller-type", "robot", "health"}, `--caller-type must be user or llm, not "robot"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, "", append([]string{"--socket", noSocket(t)}, tt.args...)...)
			if r.code != exitUsage {
				t.Errorf("exit %d, want %d\nstderr: %s", r.code, exitUsage, r.err)
			}
			if !strings.Contains(r.err, tt.wantErr) {
				t.Errorf("stderr %q does not contain %q", r.err, tt.wantErr)
			}
			if strings.Contains(r.err, "cannot reach") {
				t.Errorf("a usage error reached for the daemon: %s", r.err)
			}
			if r.out != "" {
				t.Errorf("stdout not empty: %q", r.out)
			}
		})
	}
}

func TestInvalidDefinitionFileExits2(t *testing.T) {
	r := runCLI(t, "name: Bad\nkind: js\n", "--socket", noSocket(t), "tools", "create", "-f", "-")
	if r.code != exitUsage {
		t.Fatalf("exit %d, want 2: %s", r.code, r.err)
	}
	for _, want := range []string{"Error: invalid tool definition in stdin (invalid_definition)", "  - description: is required", "  - js.code: is required", `  - name: "Bad" must match`} {
		if !strings.Contains(r.err, want) {
			t.Errorf("stderr %q lacks %q", r.err, want)
		}
	}
}

func TestDaemonUnreachableExits1(t *testing.T) {
	sock := noSocket(t)
	for _, args := range [][]string{{"health"}, {"tools", "list"}, {"call", "x"}, {"tools", "show", "x"}} {
		r := runCLI(t, "", append([]string{"--socket", sock}, args...)...)
		if r.code != exitFailure {
			t.Errorf("%v: exit %d, want 1", args, r.code)
		}
		if !strings.Contains(r.err, "Error: cannot reach the toolcage daemon at "+sock) || !strings.Contains(r.err, "Is the daemon running?") {
			t.Errorf("%v: stderr %q", args, r.err)
		}
	}
	// The socket can come from the environment.
	t.Setenv("TOOLCAGE_SOCKET", sock)
	if r := runCLI(t, "", "health"); !strings.Contains(r.err, sock) {
		t.Errorf("TOOLCAGE_SOCKET ignored: %s", r.err)
	}
}

func TestVersionWithoutDaemon(t *testing.T) {
	r := runCLI(t, "", "--socket", noSocket(t), "version")
	if r.code != 0 || !strings.Contains(r.out, "Client: toolcage ") || !strings.Contains(r.out, "Daemon: not reachable") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	r = runCLI(t, "", "--socket", noSocket(t), "version", "--json")
	if r.code != 0 || !strings.Contains(r.out, `"daemon": null`) {
		t.Errorf("exit %d, stdout %q", r.code, r.out)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {}, {"tools"}, {"tools", "--help"}, {"call", "--help"}, {"help", "call"}, {"tools", "create", "-h"}} {
		r := runCLI(t, "", args...)
		if r.code != 0 || !strings.Contains(r.out, "USAGE:") || r.err != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.out, r.err)
		}
	}
	// Every command says what it does and how to use it.
	for _, c := range commands() {
		checkHelpText(t, "toolcage "+c.Name, c)
	}
}

func checkHelpText(t *testing.T, path string, c *cli.Command) {
	t.Helper()
	if c.Usage == "" || !strings.HasPrefix(c.UsageText, path) {
		t.Errorf("%s: Usage %q, UsageText %q", path, c.Usage, c.UsageText)
	}
	for _, s := range c.Subcommands {
		checkHelpText(t, path+" "+s.Name, s)
	}
}

func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	code := runWithInput(ctx, []string{"toolcage", "--socket", noSocket(t), "health"}, strings.NewReader(""), &out, &errb)
	if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

func TestPermuteArgs(t *testing.T) {
	cliApp := newCLI(&app{})
	tests := []struct {
		in, want string
	}{
		{"toolcage", "toolcage"},
		{"toolcage health", "toolcage health"},
		{"toolcage --json health", "toolcage --json health"},
		{"toolcage --socket /s tools list --limit 5", "toolcage --socket /s tools list --limit 5"},
		{"toolcage call NAME --arg a=1 --arg b=2", "toolcage call --arg a=1 --arg b=2 -- NAME"},
		{"toolcage call NAME --json", "toolcage call --json -- NAME"},
		{"toolcage tools show NAME --definition --json", "toolcage tools show --definition --json -- NAME"},
		{"toolcage tools rollback NAME --to 2", "toolcage tools rollback --to 2 -- NAME"},
		{"toolcage tools rollback NAME --to=2", "toolcage tools rollback --to=2 -- NAME"},
		{"toolcage tools update NAME -f -", "toolcage tools update -f - -- NAME"},
		{"toolcage call -- -weird", "toolcage call -- -weird"},
		{"toolcage call NAME -- --arg", "toolcage call -- NAME --arg"},
		{"toolcage frob --x y", "toolcage frob --x y"},
		{"toolcage help tools", "toolcage help tools"},
		{"toolcage ls NAME", "toolcage ls NAME"},
		{"toolcage tools ls --kind js", "toolcage tools ls --kind js"},
	}
	for _, tt := range tests {
		got := permuteArgs(cliApp, strings.Fields(tt.in))
		if !reflect.DeepEqual(got, strings.Fields(tt.want)) {
			t.Errorf("permuteArgs(%q) = %q, want %q", tt.in, strings.Join(got, " "), tt.want)
		}
	}
}

// TestVersionFlag: --version prints the same version the version command
// and the daemon report (daemon.Version, set by the Makefile).
func TestVersionFlag(t *testing.T) {
	r := runCLI(t, "", "--version")
	if r.code != exitOK || r.out != "toolcage version "+daemon.Version+"\n" || r.err != "" {
		t.Errorf("--version: %v", r)
	}
}
