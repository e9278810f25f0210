package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/store"
)

// greetYAML is a shell tool every call of which needs a person's approval.
const greetYAML = `name: greet
description: says hello
kind: shell
approval: ask
parameters: {type: object, properties: {who: {type: string}}, required: [who]}
shell:
  command: "echo hello {{who}}"
`

// parked is a call running as a process of its own, waiting for approval.
type parked struct {
	cmd       *exec.Cmd
	out, errb bytes.Buffer
}

func parkCall(t *testing.T, sock string, args ...string) *parked {
	t.Helper()
	p := &parked{}
	p.cmd = cliProcess(&p.out, &p.errb, append([]string{"--socket", sock, "call"}, args...)...)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

func (p *parked) wait(t *testing.T) result {
	t.Helper()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the parked call did not return")
	}
	return result{code: p.cmd.ProcessState.ExitCode(), out: p.out.String(), err: p.errb.String()}
}

// approvals lists approvals with status through the CLI.
func approvals(t *testing.T, sock, status string) []api.Approval {
	t.Helper()
	return decodeStrict[api.ApprovalList](t, mustOK(t, sock, "approvals", "list", "--status", status, "--json").out).Approvals
}

// waitPending waits until n approvals are pending and returns them.
func waitPending(t *testing.T, sock string, n int) []api.Approval {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		l := approvals(t, sock, "pending")
		if len(l) == n {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d pending approvals, have %+v", n, l)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var approvalIDRE = regexp.MustCompile(`^[a-z2-7]{8}$`)

func TestApprovalAllowDeny(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, greetYAML)

	// Allowed: the waiting caller gets the result.
	p := parkCall(t, sock, "greet", "--arg", "who=world")
	l := waitPending(t, sock, 1)
	a := l[0]
	if !approvalIDRE.MatchString(a.ID) || a.Tool != "greet" || a.Version != 1 || a.Status != "pending" ||
		a.Rendered != `["echo","hello","world"]` || a.CallerType != "user" || !sameJSON(t, a.Arguments, []byte(`{"who":"world"}`)) {
		t.Fatalf("pending approval %+v", a)
	}
	r := mustOK(t, sock, "approvals", "list")
	if !regexp.MustCompile(`(?m)^ID\s+TOOL\s+VER\s+CALLER\s+WHAT\s+CREATED\n` + a.ID + `\s+greet\s+1\s+user:uid:\d+\s+\["echo","hello","world"\]\s+\d{4}-`).MatchString(r.out) {
		t.Errorf("list:\n%s", r.out)
	}
	r = mustOK(t, sock, "approvals", "show", a.ID[:5])
	for _, want := range []string{"ID:        " + a.ID + "\n", "Tool:      greet (version 1)\n", `Runs:      ["echo","hello","world"]` + "\n", `Arguments: {"who":"world"}`} {
		if !strings.Contains(r.out, want) {
			t.Errorf("show lacks %q:\n%s", want, r.out)
		}
	}
	wantExit(t, tc(t, sock, "approvals", "show", "zzzz"), exitFailure, `no approval "zzzz"`)
	// Only a person decides.
	wantExit(t, tc(t, sock, "--caller-type", "llm", "approvals", "allow", a.ID), exitRefused, "only a person", "(forbidden)")
	r = mustOK(t, sock, "approvals", "allow", a.ID[:4]) // a unique prefix
	if r.out != "Allowed "+a.ID+" (greet v1)\n" {
		t.Errorf("allow: %v", r)
	}
	r = p.wait(t)
	if r.code != exitOK || !strings.Contains(r.out, "hello world") {
		t.Fatalf("allowed call: %v", r)
	}
	if got := approvals(t, sock, "allowed"); len(got) != 1 || got[0].ID != a.ID || got[0].DecidedAt == nil || !strings.HasPrefix(got[0].DecidedBy, "uid:") {
		t.Errorf("allowed approvals: %+v", got)
	}
	wantExit(t, tc(t, sock, "approvals", "deny", a.ID), exitFailure, "is already allowed", "(conflict)")

	// Denied: approval_denied, exit 3, recorded as refused.
	p = parkCall(t, sock, "greet", "--arg", "who=moon")
	a = waitPending(t, sock, 1)[0]
	r = mustOK(t, sock, "approvals", "deny", a.ID)
	if r.out != "Denied "+a.ID+" (greet v1)\n" {
		t.Errorf("deny: %v", r)
	}
	r = p.wait(t)
	wantExit(t, r, exitRefused, "a person denied approval "+a.ID, "(approval_denied)", "  approval id: "+a.ID)
	recs := audit(t, sock, "greet")
	if len(recs) != 2 || recs[0].Outcome != "refused" || recs[0].ErrorCode != "approval_denied" || recs[1].Outcome != "ok" {
		t.Errorf("audit: %+v", recs)
	}

	// Ids: too short, unknown.
	wantExit(t, tc(t, sock, "approvals", "allow", "abc"), exitUsage, "too short")
	wantExit(t, tc(t, sock, "approvals", "allow", "zzzz2222"), exitFailure, "no approval", "(not_found)")
	wantExit(t, tc(t, sock, "approvals", "allow"), exitUsage, "missing the approval ID")
}

func TestApprovalAmbiguousPrefix(t *testing.T) {
	t.Parallel()
	ld := launchDaemon(t, nil)
	ctx := context.Background()
	// A second handle on the daemon's database, as another process would.
	st, err := store.Open(ctx, filepath.Join(ld.dataDir, "toolcage.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range []string{"abcd2222", "abcd3333"} {
		if err := st.CreateApproval(ctx, &store.Approval{ID: id, Tool: "greet", Version: 1, ArgsHash: "h", Rendered: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	wantExit(t, tc(t, ld.socket, "approvals", "deny", "abcd"), exitUsage, `prefix "abcd" is ambiguous`, "abcd2222", "abcd3333")
	mustOK(t, ld.socket, "approvals", "deny", "ABCD3") // case does not matter
	if l := approvals(t, ld.socket, "denied"); len(l) != 1 || l[0].ID != "abcd3333" {
		t.Errorf("denied: %+v", l)
	}
}

func TestApprovalTimeout(t *testing.T) {
	t.Parallel()
	ld := launchDaemon(t, func(c *daemon.Config) { c.Approvals.Timeout = 300 * time.Millisecond })
	sock := ld.socket
	createTool(t, sock, greetYAML)
	start := time.Now()
	r := tc(t, sock, "call", "greet", "--arg", "who=world")
	wantExit(t, r, exitRefused, "timed out after 300ms", "(approval_denied)")
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("returned after %s", d)
	}
	l := approvals(t, sock, "expired")
	if len(l) != 1 || l[0].DecidedBy != "timeout" {
		t.Fatalf("expired: %+v", l)
	}
	if recs := audit(t, sock, "greet"); len(recs) != 1 || recs[0].Outcome != "refused" || recs[0].ErrorCode != "approval_denied" {
		t.Errorf("audit: %+v", recs)
	}
	wantExit(t, tc(t, sock, "approvals", "allow", l[0].ID), exitFailure, "already expired")
}

func TestApprovalAlways(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, greetYAML)

	p := parkCall(t, sock, "greet", "--args-json", `{"who": "world"}`)
	a := waitPending(t, sock, 1)[0]
	r := mustOK(t, sock, "approvals", "allow", a.ID, "--always")
	if r.out != "Allowed "+a.ID+" (greet v1), and the same call from now on\n" {
		t.Errorf("allow --always: %v", r)
	}
	if r := p.wait(t); r.code != exitOK {
		t.Fatalf("allowed call: %v", r)
	}
	// The same call (however its JSON is spelled) runs without asking.
	r = tc(t, sock, "call", "greet", "--arg", "who=world")
	if r.code != exitOK || !strings.Contains(r.out, "hello world") {
		t.Fatalf("identical call: %v", r)
	}
	r = tc(t, sock, "call", "greet", "--args-json", `{ "who":"world" }`, "--no-wait")
	if r.code != exitOK {
		t.Fatalf("identical call, other spacing: %v", r)
	}
	// Other arguments ask again.
	wantExit(t, tc(t, sock, "call", "greet", "--arg", "who=moon", "--no-wait"), exitRefused, "(approval_required)", "  approval id: ")
	// A new version (the command changed) voids the approval.
	r = tcIn(t, sock, strings.Replace(greetYAML, "echo hello", "echo hi", 1), "tools", "update", "greet", "-f", "-")
	if r.code != exitOK {
		t.Fatalf("update: %v", r)
	}
	r = tc(t, sock, "call", "greet", "--arg", "who=world", "--no-wait")
	wantExit(t, r, exitRefused, "(approval_required)")
	l := approvals(t, sock, "pending")
	if len(l) != 2 || l[1].Version != 2 || l[1].Rendered != `["echo","hi","world"]` {
		t.Errorf("pending: %+v", l)
	}
	if n := len(audit(t, sock, "greet")); n != 5 {
		t.Errorf("%d audit records, want 5", n)
	}
}

// serveAt runs a daemon on sock and dataDir until the returned stop is
// called (or the test ends).
func serveAt(t *testing.T, sock, dataDir string) (stop func()) {
	t.Helper()
	cfg, err := daemon.LoadConfig("", map[string]any{
		"socket": sock, "data_dir": dataDir, "executor.path": executorPath, "shutdown_timeout": "10s",
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	log := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	d, err := daemon.New(ctx, cfg, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon Serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("daemon did not stop within 30s")
		}
		d.Close()
	}
	t.Cleanup(stop)
	return stop
}

func TestApprovalSurvivesRestart(t *testing.T) {
	t.Parallel()
	sockDir, err := os.MkdirTemp("", "tc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock, dataDir := filepath.Join(sockDir, "d.sock"), t.TempDir()
	stop := serveAt(t, sock, dataDir)
	createTool(t, sock, greetYAML)

	p := parkCall(t, sock, "greet", "--arg", "who=world")
	a := waitPending(t, sock, 1)[0]
	start := time.Now()
	stop()
	// The waiting caller is told at once; its approval stays pending.
	r := p.wait(t)
	wantExit(t, r, exitFailure, "the daemon is stopping; approval "+a.ID+" stays pending", "(unavailable)")
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("stopping took %s", d)
	}

	serveAt(t, sock, dataDir)
	l := waitPending(t, sock, 1)
	if l[0].ID != a.ID || l[0].Rendered != `["echo","hello","world"]` {
		t.Fatalf("after restart: %+v", l)
	}
	mustOK(t, sock, "approvals", "allow", a.ID, "--always")
	r = tc(t, sock, "call", "greet", "--arg", "who=world", "--no-wait")
	if r.code != exitOK || !strings.Contains(r.out, "hello world") {
		t.Fatalf("identical call after restart: %v", r)
	}
	if l := approvals(t, sock, "pending"); len(l) != 0 {
		t.Errorf("pending: %+v", l)
	}
}

func TestApprovalToolChangedWhileParked(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, greetYAML)
	p := parkCall(t, sock, "greet", "--arg", "who=world")
	a := waitPending(t, sock, 1)[0]
	if r := tcIn(t, sock, strings.Replace(greetYAML, "echo hello", "echo bye", 1), "tools", "update", "greet", "-f", "-"); r.code != exitOK {
		t.Fatalf("update: %v", r)
	}
	// The wait ends when the tool changes, and the approval expires with
	// it: nobody can allow what no longer runs as shown.
	r := p.wait(t)
	wantExit(t, r, exitRefused, "changed to version 2 while approval "+a.ID, "(approval_denied)")
	if strings.Contains(r.out, "bye") || strings.Contains(r.out, "hello") {
		t.Errorf("something ran: %v", r)
	}
	wantExit(t, tc(t, sock, "approvals", "allow", a.ID), exitFailure, "approval "+a.ID+" is already expired", "(conflict)")
}
