package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/store"
)

const askEcho = `{"name":"ask_echo","description":"d","kind":"js","approval":"ask","parameters":{"type":"object"},"js":{"code":"return args"}}`

func asCaller(c *api.Client, id string) *api.Client {
	cc := *c
	cc.CallerID = id
	return &cc
}

// parkNoWait calls ask_echo with args as c, without waiting: it must park,
// and it returns the new approval's id.
func parkNoWait(t *testing.T, c *api.Client, args any) string {
	t.Helper()
	_, err := callTool(noWait(c), "ask_echo", args)
	ae := apiErr(t, err)
	if ae.Code != errdefs.ApprovalRequired || ae.ApprovalID == "" {
		t.Fatalf("want a new pending approval, got %v", err)
	}
	return ae.ApprovalID
}

func allow(t *testing.T, c *api.Client, id string) {
	t.Helper()
	if err := c.Do(context.Background(), "POST", "/v1/approvals/"+id+"/allow", nil, nil); err != nil {
		t.Fatalf("allow %s: %v", id, err)
	}
}

func getApproval(t *testing.T, c *api.Client, id string) api.Approval {
	t.Helper()
	var l api.ApprovalList
	if err := c.Do(context.Background(), "GET", "/v1/approvals", nil, &l); err != nil {
		t.Fatal(err)
	}
	for _, a := range l.Approvals {
		if a.ID == id {
			return a
		}
	}
	t.Fatalf("no approval %s", id)
	return api.Approval{}
}

// TestApprovalRetryRunsOnce: after `call --no-wait` and `approvals allow`,
// the caller's identical retry runs without parking, once; a second retry,
// another caller, other arguments, another worker's agent or a retry after
// the validity park anew; a caller that waited uses its approval up.
func TestApprovalRetryRunsOnce(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.Approvals.Validity = 700 * time.Millisecond })
	c := td.client
	create(t, c, askEcho)
	alice, bob := asCaller(c, "alice"), asCaller(c, "bob")

	id := parkNoWait(t, alice, map[string]any{"x": 1, "y": "a"})
	allow(t, c, id)
	// Not for another caller, nor for other arguments: both park.
	if other := parkNoWait(t, bob, map[string]any{"x": 1, "y": "a"}); other == id {
		t.Fatal("bob got alice's approval id")
	}
	parkNoWait(t, alice, map[string]any{"x": 2, "y": "a"})
	// The retry, its JSON spelled otherwise, runs on the approval.
	var resp api.CallResponse
	body := []byte(`{"arguments": {"y":"a",  "x": 1}}`)
	if err := noWait(alice).Do(context.Background(), "POST", "/v1/tools/ask_echo/call", body, &resp); err != nil {
		t.Fatalf("retry after allow: %v", err)
	}
	var got map[string]any
	if json.Unmarshal(resp.Result, &got) != nil || got["x"] != float64(1) || got["y"] != "a" || len(got) != 2 {
		t.Errorf("retry result %s", resp.Result)
	}
	if a := getApproval(t, c, id); a.Status != "allowed" || a.UsedAt == nil {
		t.Errorf("the used approval: %+v", a)
	}
	// Once only.
	second := parkNoWait(t, alice, map[string]any{"x": 1, "y": "a"})

	// Past the validity the retry parks again.
	allow(t, c, second)
	time.Sleep(800 * time.Millisecond)
	if late := parkNoWait(t, alice, map[string]any{"x": 1, "y": "a"}); late == second {
		t.Fatal("a late retry reused the approval id")
	}
	if a := getApproval(t, c, second); a.UsedAt != nil {
		t.Errorf("a late retry used the approval: %+v", a)
	}

	// A caller that waits and is allowed uses the approval itself: its
	// immediate retry parks.
	done := make(chan error, 1)
	go func() {
		_, err := callTool(alice, "ask_echo", map[string]any{"w": true})
		done <- err
	}()
	var waiting string
	waitFor(t, "the waiting call's approval", func() bool {
		var l api.ApprovalList
		if c.Do(context.Background(), "GET", "/v1/approvals?status=pending", nil, &l) != nil {
			return false
		}
		for _, a := range l.Approvals {
			if strings.Contains(string(a.Arguments), `"w"`) {
				waiting = a.ID
				return true
			}
		}
		return false
	})
	allow(t, c, waiting)
	if err := <-done; err != nil {
		t.Fatalf("the waiting call: %v", err)
	}
	parkNoWait(t, alice, map[string]any{"w": true})

	// An agent's approval is its worker's: the same call from the person,
	// or from another worker's agent, parks.
	dir := t.TempDir()
	var tokens []string
	for _, name := range []string{"ops", "dev"} {
		path := filepath.Join(dir, name+".yaml")
		writeFile(t, path, "name: "+name+"\ntools: [ask_echo]\n")
		w, err := addWorker(c, path)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, w.Token)
	}
	ops, dev := withToken(c, tokens[0]), withToken(c, tokens[1])
	agentID := parkNoWait(t, ops, map[string]any{"q": 1})
	if a := getApproval(t, c, agentID); a.Worker != "ops" || a.CallerID != "worker:ops" {
		t.Errorf("agent's approval: %+v", a)
	}
	allow(t, c, agentID)
	parkNoWait(t, dev, map[string]any{"q": 1})
	parkNoWait(t, c, map[string]any{"q": 1})
	if r, err := callTool(noWait(ops), "ask_echo", map[string]any{"q": 1}); err != nil || string(r.Result) != `{"q":1}` {
		t.Fatalf("the agent's retry: %v %s", err, r.Result)
	}
}

// TestApprovalRetryOff: approvals.validity 0 keeps the old rule: an
// allowed approval whose caller is gone runs nothing.
func TestApprovalRetryOff(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.Approvals.Validity = 0 })
	create(t, td.client, askEcho)
	id := parkNoWait(t, td.client, map[string]any{"x": 1})
	allow(t, td.client, id)
	if again := parkNoWait(t, td.client, map[string]any{"x": 1}); again == id {
		t.Fatal("same id")
	}
}

// sseStream reads one event stream of the socket API in the background.
type sseStream struct {
	events chan api.Event
	done   chan error
	close  func()
}

func openStream(t *testing.T, c *api.Client, path string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	body, err := c.Open(ctx, path)
	if err != nil {
		cancel()
		t.Fatalf("open %s: %v", path, err)
	}
	s := &sseStream{events: make(chan api.Event, 64), done: make(chan error, 1), close: func() { cancel(); body.Close() }}
	go func() {
		s.done <- api.ReadEvents(body, func(ev api.Event) error { s.events <- ev; return nil })
		close(s.events)
	}()
	t.Cleanup(s.close)
	return s
}

// next returns the next event, failing after a while.
func (s *sseStream) next(t *testing.T) api.Event {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return api.Event{}
}

// quiet fails if an event comes within d.
func (s *sseStream) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if ok {
			t.Fatalf("unexpected event %s %s", ev.Name, ev.Data)
		}
	case <-time.After(d):
	}
}

func approvalOf(t *testing.T, ev api.Event) api.Approval {
	t.Helper()
	if ev.Name != api.EventApproval {
		t.Fatalf("event %q, want approval: %s", ev.Name, ev.Data)
	}
	var a api.Approval
	if err := json.Unmarshal(ev.Data, &a); err != nil || a.ID != ev.ID {
		t.Fatalf("approval event %s (id %s): %v", ev.Data, ev.ID, err)
	}
	return a
}

// TestApprovalEventsAndWebhook: GET /v1/approvals/events starts with the
// pending approvals, then brings each new and decided one; an agent's
// stream has its own only; the webhook gets each new approval once; and
// stopping the daemon ends the streams at once.
func TestApprovalEventsAndWebhook(t *testing.T) {
	var mu sync.Mutex
	var hooked []api.ApprovalAnnouncement
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a api.ApprovalAnnouncement
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil || r.Method != http.MethodPost {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		mu.Lock()
		hooked = append(hooked, a)
		mu.Unlock()
	}))
	defer hook.Close()
	td := startDaemon(t, "", func(c *Config) {
		c.Approvals.Webhook, c.Approvals.WebhookAllowPrivate, c.Approvals.WebhookTimeout = hook.URL+"/toolcage", true, 2*time.Second
	})
	c := td.client
	create(t, c, askEcho)
	first := parkNoWait(t, c, map[string]any{"n": 1})

	person := openStream(t, c, "/v1/approvals/events")
	if a := approvalOf(t, person.next(t)); a.ID != first || a.Status != "pending" {
		t.Fatalf("backlog: %+v", a)
	}
	path := filepath.Join(t.TempDir(), "ops.yaml")
	writeFile(t, path, "name: ops\ntools: [ask_echo]\n")
	w, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	agentClient := withToken(c, w.Token)
	agent := openStream(t, agentClient, "/v1/approvals/events")
	agent.quiet(t, 200*time.Millisecond) // the person's approval is not the agent's business

	second := parkNoWait(t, agentClient, map[string]any{"n": 2})
	if a := approvalOf(t, person.next(t)); a.ID != second || a.Status != "pending" || a.Worker != "ops" || a.Rendered == "" {
		t.Fatalf("new approval: %+v", a)
	}
	if a := approvalOf(t, agent.next(t)); a.ID != second {
		t.Fatalf("agent's new approval: %+v", a)
	}
	allow(t, c, first)
	if a := approvalOf(t, person.next(t)); a.ID != first || a.Status != "allowed" || a.DecidedAt == nil {
		t.Fatalf("decision: %+v", a)
	}
	agent.quiet(t, 200*time.Millisecond)

	waitFor(t, "two webhook announcements", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(hooked) == 2
	})
	mu.Lock()
	for i, id := range []string{first, second} {
		h := hooked[i]
		if h.Event != "approval.pending" || h.Approval.ID != id || !strings.Contains(h.Text, "toolcage approvals allow "+id) {
			t.Errorf("announcement %d: %+v", i, h)
		}
	}
	mu.Unlock()

	// Stopping ends the streams; Shutdown does not wait for them.
	start := time.Now()
	td.stop()
	if td.serveErr != nil {
		t.Fatal(td.serveErr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stopping with open streams took %s", d)
	}
	for _, s := range []*sseStream{person, agent} {
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			t.Fatal("a stream outlived the daemon")
		}
	}
}

func executionOf(t *testing.T, ev api.Event) api.Execution {
	t.Helper()
	if ev.Name != api.EventExecution {
		t.Fatalf("event %q, want execution: %s", ev.Name, ev.Data)
	}
	var e api.Execution
	if err := json.Unmarshal(ev.Data, &e); err != nil || e.ID != ev.ID {
		t.Fatalf("execution event %s: %v", ev.Data, err)
	}
	return e
}

func listCalls(t *testing.T, c *api.Client, query string) []api.Execution {
	t.Helper()
	var l api.ExecutionList
	if err := c.Do(context.Background(), "GET", "/v1/executions?"+query, nil, &l); err != nil {
		t.Fatalf("list %s: %v", query, err)
	}
	return l.Executions
}

// TestAuditAPI: the filters, the JSON Lines export and the stream of new
// records, and what an agent sees of them.
func TestAuditAPI(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	create(t, c, jsTool)
	before := time.Now()
	for i := range 3 {
		if _, err := callTool(asCaller(c, "alice"), "adder", map[string]any{"a": i, "b": 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := callTool(asCaller(c, "bob"), "adder", map[string]any{"a": "x"}); codeOf(err) != errdefs.InvalidArguments {
		t.Fatalf("bad call: %v", err)
	}
	for _, tt := range []struct {
		query string
		want  int
	}{
		{"", 4},
		{"caller=alice", 3},
		{"caller=bob&outcome=refused", 1},
		{"outcome=ok&tool=adder", 3},
		{"outcome=ok&tool=other", 0},
		{"since=" + before.Format(time.RFC3339Nano), 4},
		{"until=" + before.Format(time.RFC3339Nano), 0},
		{"since=1h&until=" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339), 4},
		{"since=1h&limit=2", 2},
	} {
		if got := listCalls(t, c, tt.query); len(got) != tt.want {
			t.Errorf("%q: %d calls, want %d", tt.query, len(got), tt.want)
		}
	}
	for _, q := range []string{"outcome=fine", "since=yesterday", "since=-1h", "until=2026-13-01T00:00:00Z", "since=1h&until=2h", "format=csv", "limit=-1"} {
		err := c.Do(context.Background(), "GET", "/v1/executions?"+q, nil, nil)
		if ae := apiErr(t, err); ae.Code != errdefs.InvalidRequest || ae.Status != http.StatusBadRequest {
			t.Errorf("%q: %v", q, err)
		}
	}

	// JSON Lines: oldest first, every record, one per line.
	body, err := c.Open(context.Background(), "/v1/executions?format=jsonl&caller=alice")
	if err != nil {
		t.Fatal(err)
	}
	var lines []api.Execution
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		var e api.Execution
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, e)
	}
	body.Close()
	if len(lines) != 3 || !lines[0].StartedAt.Before(lines[2].StartedAt) || string(lines[0].Arguments) != `{"a":0,"b":1}` {
		t.Errorf("export: %+v", lines)
	}

	// The stream: the newest 2 (oldest first), then what is new and
	// matches.
	s := openStream(t, c, "/v1/executions/events?limit=2&tool=adder")
	all := listCalls(t, c, "")
	if e := executionOf(t, s.next(t)); e.ID != all[1].ID {
		t.Errorf("backlog[0] %s, want %s", e.ID, all[1].ID)
	}
	if e := executionOf(t, s.next(t)); e.ID != all[0].ID {
		t.Errorf("backlog[1] %s, want %s", e.ID, all[0].ID)
	}
	refusedOnly := openStream(t, c, "/v1/executions/events?outcome=refused&limit=0")
	r, err := callTool(c, "adder", map[string]any{"a": 40, "b": 2})
	if err != nil {
		t.Fatal(err)
	}
	if e := executionOf(t, s.next(t)); e.ID != r.CallID || e.Outcome != "ok" {
		t.Errorf("new record: %+v", e)
	}
	refusedOnly.quiet(t, 200*time.Millisecond)
	if _, err := callTool(c, "missing_tool", nil); codeOf(err) != errdefs.ToolNotFound {
		t.Fatal(err)
	}
	if _, err := callTool(c, "adder", map[string]any{}); codeOf(err) != errdefs.InvalidArguments {
		t.Fatal(err)
	}
	if e := executionOf(t, refusedOnly.next(t)); e.Outcome != "refused" || e.ErrorCode != "invalid_arguments" {
		t.Errorf("refused record: %+v", e)
	}

	// An agent sees its own worker's calls, whatever it asks for.
	path := filepath.Join(t.TempDir(), "ops.yaml")
	writeFile(t, path, "name: ops\ntools: [adder]\n")
	w, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := withToken(c, w.Token)
	agentStream := openStream(t, agent, "/v1/executions/events?worker=nobody&limit=50")
	if _, err := callTool(agent, "adder", map[string]any{"a": 1, "b": 1}); err != nil {
		t.Fatal(err)
	}
	if e := executionOf(t, agentStream.next(t)); e.Worker != "ops" {
		t.Errorf("agent's stream: %+v", e)
	}
	if got := listCalls(t, agent, "caller=alice"); len(got) != 0 {
		t.Errorf("an agent read alice's calls: %+v", got)
	}
	if got := listCalls(t, agent, ""); len(got) != 1 || got[0].Worker != "ops" {
		t.Errorf("agent's calls: %+v", got)
	}
}

// TestAuditRetention: with a retention of 1h the daemon prunes the records
// older than that in the background while calls go on, and keeps the rest.
func TestAuditRetention(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dataDir, "toolcage.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	const old = 10*store.PruneBatch + 7 // many batches, the last one short
	var wg sync.WaitGroup
	for i := range old + 5 {
		started := now.Add(-2 * time.Hour).Add(time.Duration(i) * time.Millisecond)
		id := fmt.Sprintf("old%05d", i)
		if i >= old {
			started, id = now.Add(-50*time.Minute), fmt.Sprintf("new%05d", i)
		}
		wg.Go(func() {
			if err := st.RecordExecution(ctx, &store.Execution{ID: id, Tool: "adder", Outcome: store.OutcomeOK, StartedAt: started, FinishedAt: started}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := st.RecordAdminAct(ctx, &store.AdminAct{Act: "secret.set", Outcome: "ok", At: now.Add(-3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// Each prune batch waits for the gate, so calls run between batches
	// however slow the machine is.
	gate := make(chan struct{})
	td := startDaemon(t, dataDir, func(c *Config) { c.Audit.Retention = time.Hour; c.Audit.BatchGate = gate })
	c := td.client
	create(t, c, jsTool)
	calls := 0
	deadline := time.Now().Add(20 * time.Second)
	for {
		// Calls keep working while the prune runs.
		if _, err := callTool(c, "adder", map[string]any{"a": 1, "b": calls}); err != nil {
			t.Fatalf("call during pruning: %v", err)
		}
		calls++
		select {
		case gate <- struct{}{}: // one more batch
		case <-time.After(50 * time.Millisecond): // the prune is over
		}
		n, err := td.d.store.CountExecutions(ctx, "adder")
		if err != nil {
			t.Fatal(err)
		}
		if n == 5+calls {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d records left, want %d", n, 5+calls)
		}
	}
	t.Logf("%d calls made while %d old records were pruned", calls, old)
	if calls < 2 {
		t.Errorf("the prune was over before the second call: it tested nothing running beside calls")
	}
	kept := listCalls(t, c, "limit=1000")
	for _, e := range kept {
		if strings.HasPrefix(e.ID, "old") {
			t.Fatalf("old record %s kept", e.ID)
		}
	}
	// The admin acts are pruned after the calls, in a batch of their own
	// that waits for the gate too: a busy machine may not have reached it
	// by the time the calls' last batch was done.
	for {
		acts, err := td.d.store.ListAdminActs(ctx, 10, 0)
		if err == nil && len(acts) == 0 {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("old admin acts: %+v %v", acts, err)
		}
		select {
		case gate <- struct{}{}:
		case <-time.After(50 * time.Millisecond):
		}
	}
	// The counter is added to once the admin acts' prune returns.
	for {
		raw, err := c.Open(ctx, "/v1/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(raw)
		raw.Close()
		metrics := string(b)
		if strings.Contains(metrics, fmt.Sprintf("toolcage_audit_pruned_total %d\n", old+1)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics: %s", grepLines(metrics, "pruned"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestOpsConfigChecked(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ yaml, want string }{
		{"audit:\n  retention: 30m\n", "audit.retention: want 0 (keep everything) or at least 1h0m0s"},
		{"audit:\n  retention: -1h\n", "audit.retention"},
		{"approvals:\n  validity: -1s\n", "approvals.validity must not be negative"},
		{"approvals:\n  webhook: http://hooks.example.com/x\n", "approvals.webhook: plain http"},
		{"approvals:\n  webhook: http://127.0.0.1:9/x\n", "webhook_allow_private: true"},
		{"approvals:\n  webhook: https://hooks.example.com/x\n  webhook_timeout: 0s\n", "approvals.webhook_timeout must be positive"},
	} {
		file := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(file, []byte(tt.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadConfig(file, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.yaml, err, tt.want)
		}
	}
	for _, ok := range []string{"audit:\n  retention: 720h\n", "audit:\n  retention: 1h\n",
		"approvals:\n  webhook: http://127.0.0.1:9/x\n  webhook_allow_private: true\n", "approvals:\n  validity: 0s\n"} {
		file := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(file, []byte(ok), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(file, nil); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}
