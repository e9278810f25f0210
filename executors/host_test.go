package executors_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// fakeHost is an executors.Host from func fields.
type fakeHost struct {
	callTool  func(ctx context.Context, name string, args json.RawMessage) (*executors.HostCallResult, error)
	listTools func(ctx context.Context) ([]executors.HostTool, error)
}

func (h *fakeHost) CallTool(ctx context.Context, name string, args json.RawMessage) (*executors.HostCallResult, error) {
	return h.callTool(ctx, name, args)
}

func (h *fakeHost) ListTools(ctx context.Context) ([]executors.HostTool, error) {
	return h.listTools(ctx)
}

// relay is an executor whose call asks its Host for the tool named in its
// args and returns what came back (or the error's code), and keeps each
// call's Host so a later call can try an earlier one's.
type relay struct {
	mu    sync.Mutex
	hosts []executors.Host
}

func (r *relay) Execute(ctx context.Context, req *executors.Request) (*executors.Result, error) {
	r.mu.Lock()
	r.hosts = append(r.hosts, req.Host)
	h := req.Host
	if string(req.Args) == `"stale"` && len(r.hosts) > 1 {
		h = r.hosts[0] // the first call's Host, used during this one
	}
	r.mu.Unlock()
	if h == nil {
		return &executors.Result{Value: json.RawMessage(`"no host"`)}, nil
	}
	tools, err := h.ListTools(ctx)
	if err != nil {
		return &executors.Result{Value: json.RawMessage(`"` + string(errdefs.CodeOf(err)) + `"`)}, nil
	}
	res, err := h.CallTool(ctx, tools[0].Name, json.RawMessage(`{"n":1}`))
	if err != nil {
		return &executors.Result{Value: json.RawMessage(`"` + string(errdefs.CodeOf(err)) + `"`)}, nil
	}
	return &executors.Result{Value: res.Value, IsError: res.IsError, Error: res.Error}, nil
}

// TestHostOverGRPC: a call reaches its Host over the Host stream,
// errors keep their codes, and a Host answers only for the call
// running on the executor.
func TestHostOverGRPC(t *testing.T) {
	r := &relay{}
	e := hostPair(t, r)
	var seen []string
	host := &fakeHost{
		callTool: func(_ context.Context, name string, args json.RawMessage) (*executors.HostCallResult, error) {
			seen = append(seen, name+" "+string(args))
			if name == "refused" {
				return nil, errdefs.Errorf(errdefs.PolicyDenied, "no")
			}
			return &executors.HostCallResult{CallID: "n1", Value: json.RawMessage(`{"from":"` + name + `"}`)}, nil
		},
		listTools: func(context.Context) ([]executors.HostTool, error) {
			return []executors.HostTool{{Name: "word_count"}}, nil
		},
	}
	call := func(id string, args string, h executors.Host) string {
		t.Helper()
		req := &executors.Request{CallID: id, Tool: "t", Kind: executors.KindJS, Args: json.RawMessage(args), JS: &executors.JSCall{Code: "x"}}
		if h != nil {
			req.Host = h
		}
		res, err := e.Execute(context.Background(), req)
		if err != nil {
			t.Fatalf("execute %s: %v", id, err)
		}
		return string(res.Value)
	}
	if got := call("c1", `1`, host); got != `{"from":"word_count"}` || len(seen) != 1 || seen[0] != `word_count {"n":1}` {
		t.Fatalf("first call: %s, host saw %q", got, seen)
	}
	// A call with no Host gets none in the executor.
	if got := call("c2", `1`, nil); got != `"no host"` {
		t.Fatalf("call without a host: %s", got)
	}
	// The first call's Host, used during a later call, is refused.
	if got := call("c3", `"stale"`, host); got != `"forbidden"` {
		t.Fatalf("stale host: %s", got)
	}
	// A refusal keeps its code across the wire.
	refusing := &fakeHost{callTool: host.callTool, listTools: func(context.Context) ([]executors.HostTool, error) {
		return []executors.HostTool{{Name: "refused"}}, nil
	}}
	if got := call("c4", `1`, refusing); got != `"policy_denied"` {
		t.Fatalf("refusal: %s", got)
	}
}

// TestHostBoundsAsks: an executor that sends more callbacks at once than
// the daemon answers gets the rest refused (rate_limited).
func TestHostBoundsAsks(t *testing.T) {
	release := make(chan struct{})
	host := &fakeHost{callTool: func(ctx context.Context, _ string, _ json.RawMessage) (*executors.HostCallResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &executors.HostCallResult{Value: json.RawMessage(`1`)}, nil
	}}
	flood := executors.ExecutorFunc(func(ctx context.Context, req *executors.Request) (*executors.Result, error) {
		codes := make(chan errdefs.Code, 10)
		for range 10 {
			go func() {
				_, err := req.Host.CallTool(ctx, "t", nil)
				codes <- errdefs.CodeOf(err)
			}()
		}
		limited := 0
		for i := range 10 {
			if c := <-codes; c == errdefs.RateLimited {
				limited++
			}
			if i == 5 {
				close(release) // the refused ones are in; let the rest finish
			}
		}
		return &executors.Result{Value: json.RawMessage(strconv.Itoa(limited))}, nil
	})
	e := hostPair(t, flood)
	res, err := e.Execute(context.Background(), &executors.Request{CallID: "c1", Kind: executors.KindJS, JS: &executors.JSCall{Code: "x"}, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != "6" {
		t.Errorf("%s of 10 asks refused, want 6 (4 answered at once)", res.Value)
	}
}
