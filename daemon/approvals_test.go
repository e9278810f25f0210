package daemon

import (
	"context"
	"fmt"
	"slices"
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

// TestApprovalWaitEndsWhenToolChanges: a call waiting for a person's
// approval ends at once, not at the approval timeout, when its tool is
// disabled, changed or deleted meanwhile; its approval is expired, so
// nobody can allow what no longer runs as shown. A change to another tool
// leaves it waiting.
func TestApprovalWaitEndsWhenToolChanges(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	tool := "name: %s\ndescription: asks\nkind: js\napproval: ask\njs: {code: 'return 1'}"
	tests := []struct {
		name   string
		change func(t *testing.T, name string)
		code   errdefs.Code
	}{
		{"disabled", func(t *testing.T, name string) {
			if err := c.Do(ctx, "POST", "/v1/tools/"+name+"/disable", nil, nil); err != nil {
				t.Fatal(err)
			}
		}, errdefs.ToolNotActive},
		{"changed", func(t *testing.T, name string) {
			upd := strings.Replace(fmt.Sprintf(tool, name), "return 1", "return 2", 1)
			if err := c.Do(ctx, "PUT", "/v1/tools/"+name, []byte(upd), nil); err != nil {
				t.Fatal(err)
			}
		}, errdefs.ApprovalDenied},
		{"deleted", func(t *testing.T, name string) {
			if err := c.Do(ctx, "DELETE", "/v1/tools/"+name, nil, nil); err != nil {
				t.Fatal(err)
			}
		}, errdefs.ToolNotFound},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "waits_" + tt.name
			create(t, c, fmt.Sprintf(tool, name))
			done := make(chan error, 1)
			go func() {
				_, err := callTool(c, name, map[string]any{})
				done <- err
			}()
			a := waitPending(t, c, 1).Approvals[0]
			// Another tool changing is not this call's business.
			create(t, c, fmt.Sprintf("name: other_%d\ndescription: x\nkind: js\njs: {code: 'return 0'}", i))
			select {
			case err := <-done:
				t.Fatalf("the call ended on another tool's change: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			tt.change(t, name)
			select {
			case err := <-done:
				if ae := apiErr(t, err); ae.Code != tt.code {
					t.Fatalf("the waiting call ended with %+v, want %s", ae, tt.code)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the waiting call did not end when its tool changed")
			}
			var expired api.ApprovalList
			if err := c.Do(ctx, "GET", "/v1/approvals?status=expired", nil, &expired); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(expired.Approvals, func(x api.Approval) bool { return x.ID == a.ID }) {
				t.Fatalf("approval %s is not expired after the change: %+v", a.ID, expired)
			}
			if ae := apiErr(t, c.Do(ctx, "POST", "/v1/approvals/"+a.ID+"/allow", api.ApprovalDecision{}, nil)); ae.Code != errdefs.Conflict {
				t.Fatalf("allowing the expired approval: %+v", ae)
			}
		})
	}
}
