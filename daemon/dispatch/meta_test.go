package dispatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/daemon/toolset"
	tstate "github.com/toolcage/toolcage/daemon/toolset/state"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/scrub"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// kindsSeen records the kind each recorded call was counted under.
type kindsSeen struct {
	mu    sync.Mutex
	kinds map[string]string
}

func (k *kindsSeen) ObserveCall(tool, kind, _ string, _ time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kinds[tool] = kind
}
func (k *kindsSeen) ObserveRedactions(string, int) {}

// metaFixture is a dispatcher with a real store and catalog, and the
// worker "maker" (meta-tools and create on) registered in the store, which
// its agent calls through.
type metaFixture struct {
	t      *testing.T
	d      *Dispatcher
	dbPath string
	kinds  *kindsSeen
}

func newMetaFixture(t *testing.T) *metaFixture {
	t.Helper()
	ctx := context.Background()
	f := &metaFixture{t: t, dbPath: filepath.Join(t.TempDir(), "t.db"), kinds: &kindsSeen{kinds: map[string]string{}}}
	st, err := store.Open(ctx, f.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	scr, err := scrub.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := json.Marshal(&worker.Worker{Name: "maker", Path: "/w/maker.yaml", AgentTools: worker.AgentTools{MetaTools: true, Create: true}})
	if _, _, err := st.RegisterWorker(ctx, &store.Worker{Name: "maker", Path: "/w/maker.yaml", Definition: w}); err != nil {
		t.Fatal(err)
	}
	f.d = New(Config{Catalog: catalog.New(st), Store: st, Scrubber: scr, Metrics: f.kinds, ApprovalValidity: time.Minute,
		Workers: func(name string) (*worker.Worker, error) {
			sw, err := st.GetWorker(ctx, name)
			if err != nil {
				return nil, err
			}
			var w worker.Worker
			return &w, json.Unmarshal(sw.Definition, &w)
		}})
	return f
}

// setWorker changes the worker as a new version of its file would.
func (f *metaFixture) setWorker(change func(w *worker.Worker)) {
	f.t.Helper()
	w, err := f.d.cfg.Workers("maker")
	if err != nil {
		f.t.Fatal(err)
	}
	change(w)
	b, _ := json.Marshal(w)
	if err := f.d.cfg.Store.UpdateWorker(context.Background(), "maker", b); err != nil {
		f.t.Fatal(err)
	}
}

var agent = principal.Caller{ID: "worker:maker", Type: catalog.CreatedByLLM, Worker: "maker", TokenID: "tok1"}

func (f *metaFixture) call(tool string, args any, noWait bool) (*Outcome, error) {
	b, _ := json.Marshal(args)
	return f.d.Call(context.Background(), CallRequest{Tool: tool, Arguments: b, Caller: agent, NoApprovalWait: noWait})
}

// parked waits (up to 10s) for the pending approval whose arguments hold
// args and returns its id.
func (f *metaFixture) parked(t *testing.T, args string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		list, err := f.d.cfg.Store.ListApprovals(context.Background(), store.ApprovalPending)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range list {
			if strings.Contains(string(a.Args), args) {
				return a.ID
			}
		}
	}
	t.Fatalf("no call parked with arguments holding %s", args)
	return ""
}

// lastRecord is the newest audit record of tool.
func (f *metaFixture) lastRecord(t *testing.T, tool string) *store.Execution {
	t.Helper()
	ex, err := f.d.cfg.Store.ListExecutions(context.Background(), store.ExecutionFilter{Tool: tool})
	if err != nil || len(ex) == 0 {
		t.Fatalf("records of %s: %v %v", tool, ex, err)
	}
	return ex[0]
}

// TestMetaCallsPipeline: a meta-tool call goes the way of any local call:
// audited under its kind, refusals recorded as refused, out of nested
// calls' reach, and held to the worker's approval rules, the output cap
// and the timeout.
func TestMetaCallsPipeline(t *testing.T) {
	f := newMetaFixture(t)
	ctx := context.Background()
	out, err := f.call("create_tool", map[string]any{"name": "doubler", "description": "Double", "code": "return args.n * 2"}, true)
	if err != nil || !strings.Contains(string(out.Result), `"status":"active"`) || out.Version != 1 {
		t.Fatalf("create_tool: %v %+v", err, out)
	}
	if e := f.lastRecord(t, "create_tool"); e.Outcome != store.OutcomeOK || e.Worker != "maker" || e.TokenID != "tok1" || e.CallerType != "llm" || e.OutputBytes != int64(len(out.Result)) {
		t.Fatalf("record %+v", e)
	}
	if k := f.kinds.kinds["create_tool"]; k != "meta" {
		t.Errorf("create_tool counted under kind %q", k)
	}
	made, err := f.d.cfg.Catalog.Get(ctx, "doubler")
	if err != nil || made.CreatedBy != catalog.CreatedByLLM {
		t.Fatalf("doubler: %+v %v", made, err)
	}

	// A refusal on the catalog's terms is recorded as refused, as before.
	if _, err := f.d.cfg.Catalog.Create(ctx, &catalog.Definition{Name: "persons", Description: "d", Kind: "js",
		Parameters: json.RawMessage(`{"type":"object"}`), Spec: jsSpec(t, "return 1")}, principal.Caller{ID: "me", Type: catalog.CreatedByUser}); err != nil {
		t.Fatal(err)
	}
	f.setWorker(func(w *worker.Worker) { w.Tools = []string{"persons"} })
	if _, err := f.call("update_tool", map[string]any{"name": "persons", "code": "return 2"}, true); errdefs.CodeOf(err) != errdefs.Forbidden {
		t.Fatalf("update a person's tool: %v", err)
	}
	if e := f.lastRecord(t, "update_tool"); e.Outcome != store.OutcomeRefused || e.ErrorCode != string(errdefs.Forbidden) {
		t.Fatalf("refusal recorded as %+v", e)
	}
	// Bad arguments: the schema refuses before anything runs.
	if _, err := f.call("search_tools", map[string]any{}, true); errdefs.CodeOf(err) != errdefs.InvalidArguments {
		t.Fatalf("search_tools without a query: %v", err)
	}

	// Nested calls cannot reach a meta-tool: it reads as absent.
	_, err = f.d.call(ctx, CallRequest{Tool: "list_custom_tools", Arguments: json.RawMessage(`{}`), Caller: agent}, nesting{parent: "c1", depth: 1, chain: []string{"doubler"}})
	if errdefs.CodeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("nested meta-tool call: %v", err)
	}
}

// jsSpec is a js block with code.
func jsSpec(t *testing.T, code string) kind.Spec {
	t.Helper()
	def, err := catalog.ParseJSON([]byte(`{"name":"x","description":"d","kind":"js","js":{"code":` + fmt.Sprintf("%q", code) + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	return def.Spec
}

// TestMetaApprovals: the worker's approval rules hold meta-tools as any
// tool: ask parks the call for a person, whose allow runs it (for a
// caller that waits, and for the retry of one that did not) and whose deny
// refuses it; blocked refuses it.
func TestMetaApprovals(t *testing.T) {
	f := newMetaFixture(t)
	ctx := context.Background()
	person := principal.Caller{ID: "me", Type: catalog.CreatedByUser}
	f.setWorker(func(w *worker.Worker) {
		w.Approval = worker.Approval{Tools: map[string]string{"create_tool": catalog.ApprovalAsk, "get_tool": catalog.ApprovalBlocked}}
	})
	args := map[string]any{"name": "tripler", "description": "Triple", "code": "return args.n * 3"}

	// A caller that does not wait: approval_required, nothing made.
	_, err := f.call("create_tool", args, true)
	var ae *ApprovalError
	if errdefs.CodeOf(err) != errdefs.ApprovalRequired || !errors.As(err, &ae) {
		t.Fatalf("create_tool under ask: %v", err)
	}
	if _, err := f.d.cfg.Catalog.Get(ctx, "tripler"); errdefs.CodeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("tripler made before approval: %v", err)
	}
	// A person allows it (what `toolcage approvals allow` and the API
	// call): the identical retry runs on it, once.
	if _, err := f.d.DecideApproval(ctx, ae.ID, true, false, person); err != nil {
		t.Fatal(err)
	}
	if out, err := f.call("create_tool", args, true); err != nil || !strings.Contains(string(out.Result), `"name":"tripler"`) {
		t.Fatalf("retry after allow: %v %+v", err, out)
	}
	if _, err := f.d.cfg.Catalog.Get(ctx, "tripler"); err != nil {
		t.Fatalf("tripler after approval: %v", err)
	}

	// A caller that waits gets its result when the person allows.
	type answer struct {
		out *Outcome
		err error
	}
	wait := func(args map[string]any) (string, chan answer) {
		done := make(chan answer, 1)
		go func() {
			out, err := f.call("create_tool", args, false)
			done <- answer{out, err}
		}()
		return f.parked(t, fmt.Sprintf("%q", args["name"])), done
	}
	id, done := wait(map[string]any{"name": "quad", "description": "Times four", "code": "return args.n * 4"})
	if _, err := f.d.DecideApproval(ctx, id, true, false, person); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-done:
		if a.err != nil || !strings.Contains(string(a.out.Result), `"name":"quad"`) {
			t.Fatalf("allowed waiting call: %v %+v", a.err, a.out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the allowed call did not return")
	}
	// Denied: approval_denied, nothing made.
	id, done = wait(map[string]any{"name": "quint", "description": "Times five", "code": "return args.n * 5"})
	if _, err := f.d.DecideApproval(ctx, id, false, false, person); err != nil {
		t.Fatal(err)
	}
	if a := <-done; errdefs.CodeOf(a.err) != errdefs.ApprovalDenied {
		t.Fatalf("denied call: %v", a.err)
	}
	if _, err := f.d.cfg.Catalog.Get(ctx, "quint"); errdefs.CodeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("quint made though denied: %v", err)
	}

	// blocked refuses, recorded; a meta-tool the worker leaves alone runs.
	if _, err := f.call("get_tool", map[string]any{"name": "tripler"}, true); errdefs.CodeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("blocked get_tool: %v", err)
	}
	if e := f.lastRecord(t, "get_tool"); e.Outcome != store.OutcomeRefused || e.ErrorCode != string(errdefs.PolicyDenied) {
		t.Fatalf("blocked call recorded as %+v", e)
	}
	if _, err := f.call("list_custom_tools", nil, true); err != nil {
		t.Fatalf("list_custom_tools: %v", err)
	}
	// The worker's default ask holds them too.
	f.setWorker(func(w *worker.Worker) { w.Approval = worker.Approval{Default: catalog.ApprovalAsk} })
	if _, err := f.call("list_custom_tools", nil, true); errdefs.CodeOf(err) != errdefs.ApprovalRequired {
		t.Fatalf("list_custom_tools under the worker's default ask: %v", err)
	}
}

// TestLocalToolApprovalAllowed: a tool of the worker's files (here the
// state toolset's) that asks runs once a person allows its waiting call:
// the call is resolved again through its worker, not in the catalog,
// where the tool is not.
func TestLocalToolApprovalAllowed(t *testing.T) {
	f := newMetaFixture(t)
	ctx := context.Background()
	defs, err := tstate.Toolset().Tools(toolset.Worker{Name: "maker"}, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	f.setWorker(func(w *worker.Worker) {
		for _, def := range defs {
			w.LocalTools = append(w.LocalTools, &worker.LocalTool{File: "toolset:state", Def: def})
		}
		w.Approval = worker.Approval{Tools: map[string]string{"list_state_keys": catalog.ApprovalAsk}}
	})
	done := make(chan error, 1)
	go func() {
		out, err := f.call("list_state_keys", nil, false)
		if err == nil && string(out.Result) != `{"keys":[]}` {
			err = fmt.Errorf("result %s", out.Result)
		}
		done <- err
	}()
	if _, err := f.d.DecideApproval(ctx, f.parked(t, "{}"), true, false, principal.Caller{ID: "me", Type: catalog.CreatedByUser}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("allowed list_state_keys: %v", err)
	}
}

// TestMetaOutputCap: a meta-tool's result is held to the output limit (the
// worker's cap here) like any local call's: at the limit it passes, one
// byte under the result it is limit_exceeded, recorded as failed.
func TestMetaOutputCap(t *testing.T) {
	f := newMetaFixture(t)
	for i := range 20 {
		args := map[string]any{"name": fmt.Sprintf("tool_%02d", i), "description": strings.Repeat("a long description ", 20), "code": "return 1"}
		if _, err := f.call("create_tool", args, true); err != nil {
			t.Fatal(err)
		}
	}
	out, err := f.call("list_custom_tools", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	size := len(out.Result)
	if size < 8<<10 {
		t.Fatalf("list is only %d bytes", size)
	}
	f.setWorker(func(w *worker.Worker) { w.Limits.Output = catalog.ByteSize(size) })
	if out, err := f.call("list_custom_tools", nil, true); err != nil || len(out.Result) != size {
		t.Fatalf("at the cap: %v", err)
	}
	f.setWorker(func(w *worker.Worker) { w.Limits.Output = catalog.ByteSize(size - 1) })
	_, err = f.call("list_custom_tools", nil, true)
	if errdefs.CodeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != errdefs.LimitOutput {
		t.Fatalf("over the cap: %v", err)
	}
	if e := f.lastRecord(t, "list_custom_tools"); e.Outcome != store.OutcomeFailed || e.Limit != errdefs.LimitOutput {
		t.Fatalf("recorded as %+v", e)
	}
}

// TestMetaTimeout: a meta-tool call is held to its time limit (the
// worker's here): create_tool stuck behind another writer's lock on the
// store ends as a timeout, recorded as failed.
func TestMetaTimeout(t *testing.T) {
	f := newMetaFixture(t)
	const limit = 200 * time.Millisecond
	f.setWorker(func(w *worker.Worker) { w.Limits.Timeout = catalog.Duration(limit) })
	// Another writer holds the database's write lock.
	db, err := sql.Open("sqlite3", "file:"+f.dbPath+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		err error
		d   time.Duration
	}
	done := make(chan answer, 1)
	start := time.Now()
	go func() {
		_, err := f.call("create_tool", map[string]any{"name": "stuck", "description": "d", "code": "return 1"}, true)
		done <- answer{err, time.Since(start)}
	}()
	// The lock is let go well past the limit, so the call cannot finish
	// in time; whether SQLite gives up on the deadline or the lock, the
	// call is a timeout.
	time.Sleep(3 * limit)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if errdefs.CodeOf(a.err) != errdefs.Timeout || a.d < limit {
		t.Fatalf("create_tool behind a lock: %v after %v", a.err, a.d)
	}
	if e := f.lastRecord(t, "create_tool"); e.Outcome != store.OutcomeFailed || e.ErrorCode != string(errdefs.Timeout) {
		t.Fatalf("recorded as %+v", e)
	}
	// Its context ended with the limit, and nothing was made.
	if _, err := f.d.cfg.Catalog.Get(context.Background(), "stuck"); errdefs.CodeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("the timed-out create_tool made its tool: %v", err)
	}
}
