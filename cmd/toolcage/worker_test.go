package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/internal/testfs"
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

// TestWorkerRmDataLeft: when a removed worker's data directory cannot be
// deleted, worker rm fails (exit 1) saying the worker is removed and
// which directory is left and why; the worker is gone all the same, and
// rm again finishes the job once the cause is fixed.
func TestWorkerRmDataLeft(t *testing.T) {
	t.Parallel()
	ld := launchDaemon(t, nil)
	sock := ld.socket
	file := filepath.Join(t.TempDir(), "keeper.yaml")
	if err := os.WriteFile(file, []byte("name: keeper\ntoolsets: {sql: {}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustOK(t, sock, "worker", "add", file)
	mustOK(t, sock, "call", "--worker", "keeper", "db_sql", "--arg", "sql=CREATE TABLE notes (x)")
	dir := filepath.Join(ld.dataDir, "workers", "keeper")
	undo := testfs.Undeletable(t, dir)

	r := tc(t, sock, "worker", "rm", "keeper")
	wantExit(t, r, exitFailure, `worker "keeper" is removed (its tokens no longer work), but its data directory `+dir+` could not be deleted`,
		"toolcage worker rm keeper", "(internal)")
	if r.out != "" || !strings.Contains(r.err, "operation not permitted") && !strings.Contains(r.err, "permission denied") {
		t.Fatalf("worker rm: %v", r)
	}
	wantExit(t, tc(t, sock, "worker", "show", "keeper"), exitFailure, `no worker named "keeper"`)
	if _, err := os.Stat(filepath.Join(dir, "db.sqlite")); err != nil {
		t.Fatalf("the database: %v", err)
	}
	// Added again while the old data is there, it is refused: it would
	// find the removed worker's tables.
	wantExit(t, tc(t, sock, "worker", "add", file), exitFailure, `the data directory `+dir+` of a removed worker named "keeper" is still there`,
		"toolcage worker rm keeper", "(conflict)")
	// --json: the error is one JSON line on stderr.
	r = tc(t, sock, "worker", "rm", "keeper", "--json")
	var body api.ErrorBody
	if r.code != exitFailure || json.Unmarshal([]byte(r.err), &body) != nil || body.Error.Code != "internal" || !strings.Contains(body.Error.Message, dir) {
		t.Fatalf("worker rm --json: %v", r)
	}

	// The cause fixed, rm finishes: the directory goes; then there is
	// nothing left to remove.
	undo()
	if out := mustOK(t, sock, "worker", "rm", "keeper").out; out != "Removed worker keeper\n" {
		t.Fatalf("worker rm again: %q", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the data directory is still there: %v", err)
	}
	wantExit(t, tc(t, sock, "worker", "rm", "keeper"), exitFailure, `no worker named "keeper"`)
	// Added again under the name, it starts empty.
	mustOK(t, sock, "worker", "add", file)
	if out := mustOK(t, sock, "call", "--worker", "keeper", "db_schema", "--json").out; strings.Contains(out, "notes") {
		t.Fatalf("the new worker's schema: %s", out)
	}
	acts := decodeStrict[api.AdminActList](t, mustOK(t, sock, "audit", "--admin", "--json").out).AdminActs
	var rms []string
	for _, a := range acts {
		if a.Act == "worker.rm" {
			rms = append(rms, a.Outcome+":"+a.ErrorCode)
		}
	}
	if !slices.Equal(rms, []string{"failed:not_found", "ok:", "failed:internal", "failed:internal"}) {
		t.Fatalf("worker.rm acts, newest first: %v", rms)
	}
}
