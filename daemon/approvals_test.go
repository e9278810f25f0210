package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/dispatch"
	"github.com/toolcage/toolcage/errdefs"
)

// TestApprovalAPI covers the wire contract: the approval id on
// approval_required, the list, allow with a body, llm refused, and the
// waiting call getting its result.
func TestApprovalAPI(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	create(t, c, "name: ask_js\ndescription: asks\nkind: js\napproval: ask\njs: {code: 'return args.n * 2'}")
	ctx := context.Background()

	err := noWait(c).Do(ctx, "POST", "/v1/tools/ask_js/call", api.CallRequest{Arguments: mustJSON(map[string]any{"n": 1})}, nil)
	ae := apiErr(t, err)
	if ae.Code != errdefs.ApprovalRequired || ae.Status != 403 || len(ae.ApprovalID) != dispatch.ApprovalIDLen || ae.CallID == "" {
		t.Fatalf("no-wait call: %+v", ae)
	}
	bad := *c
	bad.ApprovalWait = "soon"
	if ae := apiErr(t, bad.Do(ctx, "POST", "/v1/tools/ask_js/call", api.CallRequest{}, nil)); ae.Code != errdefs.InvalidRequest {
		t.Errorf("bad wait header: %+v", ae)
	}

	type answer struct {
		resp api.CallResponse
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := callTool(c, "ask_js", map[string]any{"n": 21})
		done <- answer{r, err}
	}()
	list := waitPending(t, c, 2)
	a := list.Approvals[1]
	if a.ID == ae.ApprovalID || !strings.HasPrefix(a.Rendered, "sha256:") || a.Status != "pending" || string(a.Arguments) != `{"n":21}` {
		t.Fatalf("approval %+v", a)
	}
	if ae := apiErr(t, llm(c).Do(ctx, "POST", "/v1/approvals/"+a.ID+"/allow", api.ApprovalDecision{}, nil)); ae.Code != errdefs.Forbidden || ae.Status != 403 {
		t.Errorf("llm allow: %+v", ae)
	}
	if ae := apiErr(t, c.Do(ctx, "GET", "/v1/approvals?status=maybe", nil, nil)); ae.Code != errdefs.InvalidRequest {
		t.Errorf("bad status: %+v", ae)
	}
	var got api.Approval
	if err := c.Do(ctx, "POST", "/v1/approvals/"+a.ID+"/allow", api.ApprovalDecision{Always: false}, &got); err != nil || got.Status != "allowed" || got.DecidedAt == nil {
		t.Fatalf("allow: %+v %v", got, err)
	}
	select {
	case r := <-done:
		if r.err != nil || string(r.resp.Result) != "42" {
			t.Fatalf("allowed call: %+v %v", r.resp, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the allowed call did not return")
	}
	// Deny needs no body.
	if err := c.Do(ctx, "POST", "/v1/approvals/"+ae.ApprovalID+"/deny", nil, &got); err != nil || got.Status != "denied" {
		t.Fatalf("deny: %+v %v", got, err)
	}
}

// waitPending waits (up to 10s) until c sees n pending approvals and
// returns them, oldest first.
func waitPending(t *testing.T, c *api.Client, n int) api.ApprovalList {
	t.Helper()
	var list api.ApprovalList
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := c.Do(context.Background(), "GET", "/v1/approvals?status=pending", nil, &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Approvals) == n || time.Now().After(deadline) {
			break
		}
	}
	if len(list.Approvals) != n {
		t.Fatalf("pending: want %d, got %+v", n, list)
	}
	return list
}
