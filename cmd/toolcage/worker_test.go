package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
)

// The data worker of examples/workers, end to end through the CLI, as its
// README runs it.
func TestWorkerCommands(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	for _, f := range []string{"csv_analyzer", "word_frequency"} {
		mustOK(t, sock, "tools", "create", "-f", filepath.Join("..", "..", "examples", "tools", f+".yaml"))
	}
	createTool(t, sock, jsDef("other", "return 1"))
	file := filepath.Join("..", "..", "examples", "workers", "data.yaml")
	abs, _ := filepath.Abs(file)

	// Usage errors exit 2; registering needs a person.
	wantExit(t, tc(t, sock, "worker", "add"), exitUsage, "missing the worker FILE")
	wantExit(t, tc(t, sock, "worker", "show"), exitUsage, "missing the worker NAME")
	wantExit(t, tc(t, sock, "--caller-type", "llm", "worker", "add", file), exitRefused, "only a person may register workers (forbidden)")

	r := mustOK(t, sock, "worker", "add", file)
	tok := regexp.MustCompile(`tcw_[a-z2-7]{52}`).FindString(r.out)
	if tok == "" || !strings.Contains(r.out, "Registered worker data ("+abs+")") || !strings.Contains(r.out, "shown once") {
		t.Fatalf("worker add: %v", r)
	}
	wantExit(t, tc(t, sock, "worker", "add", file), exitFailure, "is registered already, as worker \"data\" (conflict)")

	if out := mustOK(t, sock, "worker", "list").out; !strings.Contains(out, "data") || !strings.Contains(out, abs) || strings.Contains(out, tok) {
		t.Fatalf("worker list:\n%s", out)
	}
	l := decodeStrict[api.WorkerList](t, mustOK(t, sock, "worker", "list", "--json").out)
	if len(l.Workers) != 1 || l.Workers[0].Name != "data" {
		t.Fatalf("worker list --json: %+v", l)
	}
	out := mustOK(t, sock, "worker", "show", "data").out
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`csv_analyzer\s+preApproved\s+catalog`),
		regexp.MustCompile(`word_frequency\s+preApproved\s+catalog`),
		regexp.MustCompile(`median\s+preApproved\s+\S+/examples/workers/data_tools/median.yaml`),
		regexp.MustCompile(`read_file\s+preApproved\s+toolset:filesystem`),
		regexp.MustCompile(`write_file\s+ask\s+toolset:filesystem`),
		regexp.MustCompile(`Workspace: \S+/examples/workers/data_files \(read-only, at /workspace\)`),
	} {
		if !want.MatchString(out) {
			t.Errorf("worker show lacks %s:\n%s", want, out)
		}
	}
	wantExit(t, tc(t, sock, "worker", "show", "nope"), exitFailure, `no worker named "nope"`)

	// call --worker: the worker's own tool runs; one outside it is absent.
	r = mustOK(t, sock, "call", "--worker", "data", "median", "--args-json", `{"numbers":[3,1,2]}`)
	if !strings.Contains(r.out, `"median": 2`) && !strings.Contains(r.out, `"median":2`) {
		t.Fatalf("median through the worker: %v", r)
	}
	// The filesystem toolset reads the worker's read-only workspace.
	r = mustOK(t, sock, "call", "--worker", "data", "read_file", "--arg", "path=sales.csv", "--arg", "start_line=2", "--arg", "end_line=3")
	if !strings.Contains(r.out, `north,Q1,1200\nnorth,Q2,1350\n`) {
		t.Fatalf("read_file through the worker: %v", r)
	}
	wantExit(t, tc(t, sock, "call", "--worker", "data", "read_file", "--arg", "path=../data.yaml"), exitRefused, "leads out of the workspace")
	wantExit(t, tc(t, sock, "call", "--worker", "data", "other"), exitFailure, `no tool named "other" (tool_not_found)`)
	wantExit(t, tc(t, sock, "call", "median"), exitFailure, `no tool named "median" (tool_not_found)`)
	wantExit(t, tc(t, sock, "call", "--worker", "ghost", "other"), exitFailure, `no worker named "ghost"`)
	es := audit(t, sock, "median")
	if len(es) != 1 || es[0].CallerType != "llm" || es[0].Worker != "data" || !strings.HasPrefix(es[0].CallerID, "uid:") {
		t.Fatalf("audit of the --worker call: %+v", es)
	}

	// Token rotation prints a new token once; rm unregisters.
	r = mustOK(t, sock, "worker", "token", "rotate", "data")
	if nt := regexp.MustCompile(`tcw_[a-z2-7]{52}`).FindString(r.out); nt == "" || nt == tok {
		t.Fatalf("token rotate: %v", r)
	}
	if out := mustOK(t, sock, "worker", "token", "revoke", "data").out; out != "Revoked 1 token(s) of worker data\n" {
		t.Fatalf("token revoke: %q", out)
	}
	wantExit(t, tc(t, sock, "--caller-type", "llm", "worker", "rm", "data"), exitRefused, "only a person may remove workers (forbidden)")
	if out := mustOK(t, sock, "worker", "rm", "data").out; out != "Removed worker data\n" {
		t.Fatalf("worker rm: %q", out)
	}
	wantExit(t, tc(t, sock, "worker", "rm", "data"), exitFailure, `no worker named "data"`)
	acts := decodeStrict[api.AdminActList](t, mustOK(t, sock, "audit", "--admin", "--json").out).AdminActs
	var seen []string
	for _, a := range acts {
		seen = append(seen, a.Act+":"+a.Outcome)
	}
	for _, want := range []string{"worker.add:refused", "worker.add:ok", "worker.add:failed", "worker.token.rotate:ok", "worker.token.revoke:ok", "worker.rm:refused", "worker.rm:ok", "worker.rm:failed"} {
		if !strings.Contains(strings.Join(seen, " "), want) {
			t.Errorf("admin log lacks %s: %v", want, seen)
		}
	}
}
