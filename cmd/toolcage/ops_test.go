package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/internal/testutil"
)

// follower is a CLI process that keeps printing (approvals list --watch,
// audit --follow) until it is interrupted.
type follower struct {
	cmd       *exec.Cmd
	out, errb testutil.SyncBuffer
}

func startFollower(t *testing.T, sock string, args ...string) *follower {
	t.Helper()
	f := &follower{}
	f.cmd = cliProcess(&f.out, &f.errb, append([]string{"--socket", sock}, args...)...)
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if f.cmd.ProcessState == nil {
			f.cmd.Process.Kill()
			f.cmd.Wait()
		}
	})
	return f
}

// waitOut waits until the output matches re.
func (f *follower) waitOut(t *testing.T, re string) {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(15 * time.Second)
	for !rx.MatchString(f.out.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("output never matched %s:\n%s\nstderr:\n%s", re, f.out.String(), f.errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// interrupt sends Ctrl-C and returns the exit status.
func (f *follower) interrupt(t *testing.T) int {
	t.Helper()
	if err := f.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { f.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Ctrl-C did not stop it")
	}
	return f.cmd.ProcessState.ExitCode()
}

// TestNoWaitAllowRetry is the loop an agent runs: call --no-wait parks,
// the person allows, the identical call runs once; the next parks again.
func TestNoWaitAllowRetry(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, greetYAML)
	r := tc(t, sock, "call", "greet", "--arg", "who=world", "--no-wait")
	wantExit(t, r, exitRefused, "(approval_required)", "once it is allowed, the same call again within 10m0s runs")
	id := approvals(t, sock, "pending")[0].ID
	mustOK(t, sock, "approvals", "allow", id)
	r = tc(t, sock, "call", "greet", "--arg", "who=world", "--no-wait")
	if r.code != exitOK || !strings.Contains(r.out, "hello world") {
		t.Fatalf("the retry after allow: %v", r)
	}
	wantExit(t, tc(t, sock, "call", "greet", "--arg", "who=world", "--no-wait"), exitRefused, "(approval_required)")
	if l := approvals(t, sock, "allowed"); len(l) != 1 || l[0].UsedAt == nil {
		t.Errorf("allowed: %+v", l)
	}
}

// TestApprovalsWatch: approvals list --watch prints the pending approvals,
// then each new one, until Ctrl-C (exit 0); --status all adds decisions,
// and --json prints one approval per line.
func TestApprovalsWatch(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, greetYAML)
	wantExit(t, tc(t, sock, "call", "greet", "--arg", "who=world", "--no-wait"), exitRefused)
	first := approvals(t, sock, "pending")[0].ID

	w := startFollower(t, sock, "approvals", "list", "--watch")
	all := startFollower(t, sock, "approvals", "list", "--watch", "--status", "all", "--json")
	w.waitOut(t, `(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  pending  `+first+`  greet v1  user:uid:\d+  \["echo","hello","world"\]\n`)
	all.waitOut(t, `"id":"`+first+`"`)
	wantExit(t, tc(t, sock, "call", "greet", "--arg", "who=moon", "--no-wait"), exitRefused)
	w.waitOut(t, `pending  [a-z2-7]{8}  greet v1  user:uid:\d+  \["echo","hello","moon"\]\n`)
	mustOK(t, sock, "approvals", "deny", first)
	all.waitOut(t, `"status":"denied"`)
	time.Sleep(200 * time.Millisecond) // time for a decision line the pending-only watch must not print
	if code := w.interrupt(t); code != exitOK {
		t.Errorf("Ctrl-C: exit %d\n%s", code, w.errb.String())
	}
	if strings.Contains(w.out.String(), "denied") || strings.Count(w.out.String(), "\n") != 2 {
		t.Errorf("pending-only watch:\n%s", w.out.String())
	}
	if code := all.interrupt(t); code != exitOK {
		t.Errorf("Ctrl-C: exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(all.out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("--status all --json:\n%s", all.out.String())
	}
	for _, l := range lines {
		decodeLine[api.Approval](t, l)
	}
}

// TestAuditCLI: the filters, their usage errors, the JSON Lines export and
// --follow.
func TestAuditCLI(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	createTool(t, sock, greetYAML)
	mustOK(t, sock, "js", "--code", "return 1")
	mustOK(t, sock, "--caller-id", "alice", "js", "--code", "return 2")
	wantExit(t, tc(t, sock, "call", "greet", "--arg", "who=world", "--no-wait"), exitRefused)

	rows := func(r result) int { return strings.Count(r.out, "\n") - 1 } // less the header
	for _, tt := range []struct {
		args []string
		want int
	}{
		{nil, 3},
		{[]string{"--outcome", "refused"}, 1},
		{[]string{"--caller", "alice"}, 1},
		{[]string{"--tool", "js:adhoc", "--since", "1h"}, 2},
		{[]string{"--until", "1h"}, 0},
		{[]string{"--since", time.Now().Add(time.Minute).UTC().Format(time.RFC3339)}, 0},
		{[]string{"--worker", "nobody"}, 0},
	} {
		r := mustOK(t, sock, append([]string{"audit"}, tt.args...)...)
		if rows(r) != tt.want {
			t.Errorf("audit %v: %d rows, want %d\n%s", tt.args, rows(r), tt.want, r.out)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--outcome", "fine"}, "--outcome must be ok, error, failed or refused"},
		{[]string{"--since", "yesterday"}, `--since: "yesterday" is neither`},
		{[]string{"--export", "csv"}, "--export must be jsonl"},
		{[]string{"--follow", "--export", "jsonl"}, "go separately"},
		{[]string{"--follow", "--until", "1h"}, "does not take --until"},
		{[]string{"--admin", "--caller", "alice"}, "--caller and --admin do not go together: --admin takes only"},
		{[]string{"--admin", "-o", "jsonl"}, "--export and --admin"},
		{[]string{"--export", "jsonl", "--offset", "2"}, "do not take it"},
		{[]string{"-o", "jsonl", "--format", "{{.id}}"}, "-o jsonl and --format"},
	} {
		wantExit(t, tc(t, sock, append([]string{"audit"}, tt.args...)...), exitUsage, tt.want)
	}
	wantExit(t, tc(t, sock, "tools", "list", "-o", "jsonl"), exitUsage, "-o jsonl is for exports")
	// The daemon checks what the CLI cannot know: since after until.
	wantExit(t, tc(t, sock, "audit", "--since", "1h", "--until", "2h"), exitUsage, "must be before until", "(invalid_request)")

	for _, args := range [][]string{{"audit", "--export", "jsonl"}, {"audit", "-o", "jsonl"}} {
		r := mustOK(t, sock, args...)
		sc := bufio.NewScanner(strings.NewReader(r.out))
		var ids []string
		for sc.Scan() {
			ids = append(ids, decodeLine[api.Execution](t, sc.Text()).ID)
		}
		if list := audit(t, sock, ""); len(ids) != 3 || ids[0] != list[2].ID || ids[2] != list[0].ID {
			t.Errorf("%v (oldest first): %v\n%s", args, ids, r.out)
		}
	}
	if r := mustOK(t, sock, "audit", "--export", "jsonl", "--caller", "alice", "--limit", "5"); strings.Count(r.out, "\n") != 1 {
		t.Errorf("filtered export:\n%s", r.out)
	}

	f := startFollower(t, sock, "audit", "--follow", "--limit", "1")
	f.waitOut(t, `(?m)^ID +TOOL +VER +CALLER +OUTCOME +CODE +DURATION +STARTED\nc[0-9a-f]{16} +greet +1 +user:uid:\d+ +refused +approval_required `)
	// The record comes in the backlog (since) or live, whichever the
	// stream opened in time for: exactly once either way, on a machine of
	// any speed.
	since := time.Now().UTC().Format(time.RFC3339Nano)
	fj := startFollower(t, sock, "audit", "--follow", "--json", "--since", since, "--tool", "js:adhoc")
	call := mustOK(t, sock, "js", "--code", "return 3", "--json")
	var cr api.CallResponse
	if err := json.Unmarshal([]byte(call.out), &cr); err != nil {
		t.Fatal(err)
	}
	f.waitOut(t, `(?m)^`+cr.CallID+` +js:adhoc +- +user:uid:\d+ +ok +- `)
	fj.waitOut(t, `"id":"`+cr.CallID+`"`)
	for _, p := range []*follower{f, fj} {
		if code := p.interrupt(t); code != exitOK {
			t.Errorf("Ctrl-C: exit %d\n%s", code, p.errb.String())
		}
	}
	if lines := strings.Split(strings.TrimSpace(fj.out.String()), "\n"); len(lines) != 1 {
		t.Errorf("--follow --json --since --tool js:adhoc:\n%s", fj.out.String())
	}
}

// decodeLine decodes one JSON Lines line strictly: one compact object.
func decodeLine[T any](t *testing.T, line string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || dec.More() || strings.Contains(line, "\n") {
		t.Fatalf("line is not one %T: %v\n%s", v, err, line)
	}
	return v
}
