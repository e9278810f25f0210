package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
)

func TestArgsHashCanonical(t *testing.T) {
	a, err := ArgsHash(json.RawMessage(`{"b": [1, 2], "a": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ArgsHash(json.RawMessage(`{"a":"x","b":[1,2]}`))
	c, _ := ArgsHash(json.RawMessage(`{"a":"y","b":[1,2]}`))
	e1, _ := ArgsHash(nil)
	e2, _ := ArgsHash(json.RawMessage(`{}`))
	if a != b || a == c || e1 != e2 || len(a) != 64 {
		t.Errorf("hashes: %s %s %s %s %s", a, b, c, e1, e2)
	}
	if _, err := ArgsHash(json.RawMessage(`{`)); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad JSON: %v", err)
	}
}

func TestApprovalLifecycle(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "toolcage.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a := &Approval{ID: "abcd2345", Tool: "rm_tmp", Version: 2, CallerID: "agent", CallerType: "llm",
		ArgsHash: "h1", Args: json.RawMessage(`{"p":"x"}`), Rendered: `["rm","x"]`, Change: "delete x, 2 bytes\n--- a/x\n"}
	if err := s.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateApproval(ctx, a); !errors.Is(err, ErrConflict) {
		t.Errorf("duplicate id: %v", err)
	}
	if err := s.CreateApproval(ctx, &Approval{ID: "abce2345", Tool: "other", Version: 1, ArgsHash: "h2"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetApproval(ctx, "abcd2345")
	if err != nil || got.Status != ApprovalPending || got.Tool != "rm_tmp" || got.Version != 2 || string(got.Args) != `{"p":"x"}` ||
		got.Rendered != `["rm","x"]` || got.Change != a.Change || got.CallerType != "llm" || got.CreatedAt.IsZero() || !got.DecidedAt.IsZero() {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := s.GetApproval(ctx, "zzzz2345"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	if ids, err := s.ApprovalIDsWithPrefix(ctx, "abc", 5); err != nil || len(ids) != 2 {
		t.Errorf("prefix abc: %v %v", ids, err)
	}
	if ids, err := s.ApprovalIDsWithPrefix(ctx, "abcd", 5); err != nil || len(ids) != 1 || ids[0] != "abcd2345" {
		t.Errorf("prefix abcd: %v %v", ids, err)
	}
	if _, err := s.ApprovalIDsWithPrefix(ctx, "ab%", 5); !errors.Is(err, ErrInvalid) {
		t.Errorf("wildcard prefix: %v", err)
	}
	d, err := s.DecideApproval(ctx, "abcd2345", ApprovalAllowed, "uid:1")
	if err != nil || d.Status != ApprovalAllowed || d.DecidedBy != "uid:1" || d.DecidedAt.IsZero() {
		t.Fatalf("decide: %+v %v", d, err)
	}
	if _, err := s.DecideApproval(ctx, "abcd2345", ApprovalDenied, "uid:1"); !errors.Is(err, ErrConflict) {
		t.Errorf("second decision: %v", err)
	}
	if _, err := s.DecideApproval(ctx, "nope2345", ApprovalDenied, "uid:1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing decision: %v", err)
	}
	if _, err := s.DecideApproval(ctx, "abce2345", ApprovalPending, "x"); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad status: %v", err)
	}
	if l, err := s.ListApprovals(ctx, ApprovalPending); err != nil || len(l) != 1 || l[0].ID != "abce2345" {
		t.Errorf("list pending: %+v %v", l, err)
	}
	if l, err := s.ListApprovals(ctx, ""); err != nil || len(l) != 2 {
		t.Errorf("list all: %+v %v", l, err)
	}

	key := AlwaysKey{Tool: "rm_tmp", Worker: "ops", DefHash: "d1", ArgsHash: "h1", Version: 2}
	if ok, err := s.HasAlwaysApproval(ctx, key); ok || err != nil {
		t.Errorf("always before add: %v %v", ok, err)
	}
	for range 2 {
		if err := s.AddAlwaysApproval(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	// Survives a reopen; matches only the exact (tool, worker, definition,
	// arguments), whatever the version says.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other := func(f func(*AlwaysKey)) AlwaysKey { k := key; f(&k); return k }
	for _, c := range []struct {
		name string
		key  AlwaysKey
		want bool
	}{
		{"exact", key, true},
		{"another version number, same definition", other(func(k *AlwaysKey) { k.Version = 3 }), true},
		{"other definition", other(func(k *AlwaysKey) { k.DefHash = "d2" }), false},
		{"other worker", other(func(k *AlwaysKey) { k.Worker = "web" }), false},
		{"no worker", other(func(k *AlwaysKey) { k.Worker = "" }), false},
		{"other arguments", other(func(k *AlwaysKey) { k.ArgsHash = "h2" }), false},
		{"other tool", other(func(k *AlwaysKey) { k.Tool = "other" }), false},
	} {
		if ok, err := s.HasAlwaysApproval(ctx, c.key); ok != c.want || err != nil {
			t.Errorf("always %s %+v: %v %v", c.name, c.key, ok, err)
		}
	}
	for _, k := range []AlwaysKey{other(func(k *AlwaysKey) { k.DefHash = "" }), other(func(k *AlwaysKey) { k.ArgsHash = "" }), other(func(k *AlwaysKey) { k.Tool = "" })} {
		if _, err := s.HasAlwaysApproval(ctx, k); !errors.Is(err, ErrInvalid) {
			t.Errorf("lookup of %+v: %v", k, err)
		}
		if err := s.AddAlwaysApproval(ctx, k); !errors.Is(err, ErrInvalid) {
			t.Errorf("add of %+v: %v", k, err)
		}
	}
	if l, err := s.ListApprovals(ctx, ApprovalPending); err != nil || len(l) != 1 {
		t.Errorf("pending after reopen: %+v %v", l, err)
	}
}

// A tool made under a name retires every earlier approval of the name:
// approvals for good go, unused allowed ones are used, pending ones
// expire. AllowApprovalAlways decides and approves for good at once, and
// only a pending approval.
func TestApprovalsRetiredByANewTool(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	for _, a := range []*Approval{
		{ID: "aaaa2345", Tool: "twin", Version: 1, DefHash: "d", ArgsHash: "h1"},
		{ID: "bbbb2345", Tool: "twin", Version: 1, DefHash: "d", ArgsHash: "h2"},
		{ID: "cccc2345", Tool: "twin", Version: 1, DefHash: "d", ArgsHash: "h3"},
		{ID: "dddd2345", Tool: "other", Version: 1, DefHash: "d", ArgsHash: "h1"},
	} {
		if err := s.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if a, err := s.AllowApprovalAlways(ctx, "aaaa2345", "uid:1"); err != nil || a.Status != ApprovalAllowed || a.DecidedBy != "uid:1" {
		t.Fatalf("allow always: %+v %v", a, err)
	}
	if ok, err := s.HasAlwaysApproval(ctx, AlwaysKey{Tool: "twin", DefHash: "d", ArgsHash: "h1"}); !ok || err != nil {
		t.Fatalf("always after allow always: %v %v", ok, err)
	}
	if a, err := s.AllowApprovalAlways(ctx, "aaaa2345", "uid:1"); !errors.Is(err, ErrConflict) || a == nil || a.Status != ApprovalAllowed {
		t.Errorf("allow always twice: %+v %v", a, err)
	}
	if _, err := s.AllowApprovalAlways(ctx, "zzzz2345", "uid:1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("allow always of none: %v", err)
	}
	if _, err := s.DecideApproval(ctx, "bbbb2345", ApprovalAllowed, "uid:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AllowApprovalAlways(ctx, "dddd2345", "uid:1"); err != nil {
		t.Fatal(err)
	}

	if err := s.CreateTool(ctx, &Tool{Name: "twin", Description: "d", Kind: "js", Status: "active", CreatedBy: CreatorLLM,
		Spec: json.RawMessage(`{"code":"return 1"}`)}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.HasAlwaysApproval(ctx, AlwaysKey{Tool: "twin", DefHash: "d", ArgsHash: "h1"}); ok || err != nil {
		t.Errorf("always approval outlived its tool: %v %v", ok, err)
	}
	if a, _ := s.GetApproval(ctx, "bbbb2345"); a.Status != ApprovalAllowed || a.UsedAt.IsZero() {
		t.Errorf("unused allowed approval outlived its tool: %+v", a)
	}
	if a, _ := s.GetApproval(ctx, "cccc2345"); a.Status != ApprovalExpired || a.DecidedBy != DecidedByToolGone {
		t.Errorf("pending approval outlived its tool: %+v", a)
	}
	if _, err := s.AllowApprovalAlways(ctx, "cccc2345", "uid:1"); !errors.Is(err, ErrConflict) {
		t.Errorf("allow always of a retired approval: %v", err)
	}
	// Another tool's are untouched.
	if ok, err := s.HasAlwaysApproval(ctx, AlwaysKey{Tool: "other", DefHash: "d", ArgsHash: "h1"}); !ok || err != nil {
		t.Errorf("another tool's always approval: %v %v", ok, err)
	}
}
