package js

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// hostFuncs is an executors.Host built from func fields; the daemon's is
// tested through the real pipeline in daemon/dispatch and daemon.
type hostFuncs struct {
	callTool  func(ctx context.Context, name string, args json.RawMessage) (*executors.HostCallResult, error)
	listTools func(ctx context.Context) ([]executors.HostTool, error)
}

func (h *hostFuncs) CallTool(ctx context.Context, name string, args json.RawMessage) (*executors.HostCallResult, error) {
	return h.callTool(ctx, name, args)
}

func (h *hostFuncs) ListTools(ctx context.Context) ([]executors.HostTool, error) {
	return h.listTools(ctx)
}

func hostCall(t *testing.T, code string, h executors.Host, lim executors.Limits) (*executors.Result, error) {
	t.Helper()
	settle(t)
	req := &executors.Request{CallID: "c1", Tool: "t", Limits: lim, JS: &executors.JSCall{Code: code}}
	if h != nil {
		req.Host = h
	}
	return New(Config{}).Execute(context.Background(), req)
}

// echoHost answers every call with its name and arguments, refuses the
// tool "nope" with tool_not_found and makes "bad" fail on its own terms.
func echoHost(calls *[]string) *hostFuncs {
	return &hostFuncs{
		callTool: func(_ context.Context, name string, args json.RawMessage) (*executors.HostCallResult, error) {
			*calls = append(*calls, name+" "+string(args))
			switch name {
			case "nope":
				return nil, errdefs.Errorf(errdefs.ToolNotFound, "no tool named %q", name)
			case "bad":
				return &executors.HostCallResult{CallID: "c-bad", IsError: true, Error: "Error: boom (line 1)"}, nil
			}
			return &executors.HostCallResult{CallID: "c-" + name, Value: json.RawMessage(`{"tool":"` + name + `","args":` + string(args) + `}`)}, nil
		},
		listTools: func(context.Context) ([]executors.HostTool, error) {
			return []executors.HostTool{{Name: "a", Description: "the a tool", Parameters: json.RawMessage(`{"type":"object"}`)}}, nil
		},
	}
}

func TestCallTool(t *testing.T) {
	tests := []struct {
		name, code string
		want       string
		calls      []string
	}{
		{"resolves with the result", `return await utils.callTool("a", {x: [1, "y"]})`,
			`{"tool":"a","args":{"x":[1,"y"]}}`, []string{`a {"x":[1,"y"]}`}},
		{"no arguments are {}", `return (await utils.callTool("a")).args`, `{}`, []string{`a {}`}},
		{"one after another", `const a = await utils.callTool("a", {n: 1}); const b = await utils.callTool("b", {n: a.args.n + 1}); return [a.tool, b.args.n]`,
			`["a", 2]`, []string{`a {"n":1}`, `b {"n":2}`}},
		{"a refusal rejects with its code", `try { await utils.callTool("nope", {}); return "ran" } catch (e) { return [e instanceof Error, e.code, e.message, e.callId === undefined] }`,
			`[true, "tool_not_found", "tool_not_found: no tool named \"nope\"", true]`, []string{`nope {}`}},
		{"a tool error rejects as tool_error", `try { await utils.callTool("bad"); return "ran" } catch (e) { return [e.code, e.message, e.callId] }`,
			`["tool_error", "tool_error: tool bad failed: Error: boom (line 1)", "c-bad"]`, []string{`bad {}`}},
		{"listTools is synchronous", `return utils.listTools()`, `[{"name":"a","description":"the a tool","parameters":{"type":"object"}}]`, nil},
		{"a name is required", `try { utils.callTool() } catch (e) { return e.name }`, `"TypeError"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			res, err := hostCall(t, tt.code, echoHost(&calls), executors.Limits{})
			wantValue(t, res, err, tt.want)
			if len(calls) != len(tt.calls) {
				t.Fatalf("host saw %q, want %q", calls, tt.calls)
			}
			for i := range calls {
				if calls[i] != tt.calls[i] {
					t.Errorf("call %d: %s, want %s", i, calls[i], tt.calls[i])
				}
			}
		})
	}
}

func TestCallToolWithoutHost(t *testing.T) {
	for fn, code := range map[string]string{"callTool": `utils.callTool("a")`, "listTools": `utils.listTools()`} {
		res, err := hostCall(t, `try { `+code+`; return "ran" } catch (e) { return [e.name, e.message] }`, nil, executors.Limits{})
		wantValue(t, res, err, `["TypeError", "utils.`+fn+`: this call cannot call other tools"]`)
	}
}

// TestCallToolRequestLimit: each callTool counts against the request
// limit; the one past it ends the call, uncatchably.
func TestCallToolRequestLimit(t *testing.T) {
	var calls []string
	code := `for (let i = 0; i < 10; i++) { try { await utils.callTool("a", {i}) } catch (e) {} } return "done"`
	_, err := hostCall(t, code, echoHost(&calls), executors.Limits{Requests: 3})
	if errdefs.CodeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != errdefs.LimitRequests {
		t.Fatalf("err = %v, want limit_exceeded (requests)", err)
	}
	if len(calls) != 3 {
		t.Errorf("host saw %d calls, want 3 (the limit)", len(calls))
	}
	// At the limit, the call runs.
	calls = nil
	res, err := hostCall(t, `for (let i = 0; i < 3; i++) await utils.callTool("a"); return "done"`, echoHost(&calls), executors.Limits{Requests: 3})
	wantValue(t, res, err, `"done"`)
}

// TestCallToolStoppedWhileWaiting: the call's time limit covers a nested
// call in flight, which is cancelled with it.
func TestCallToolStoppedWhileWaiting(t *testing.T) {
	cancelled := make(chan struct{})
	h := &hostFuncs{callTool: func(ctx context.Context, _ string, _ json.RawMessage) (*executors.HostCallResult, error) {
		<-ctx.Done()
		close(cancelled)
		return nil, &errdefs.Error{Code: errdefs.Unavailable, Err: ctx.Err()}
	}}
	start := time.Now()
	_, err := hostCall(t, `await utils.callTool("slow"); return 1`, h, executors.Limits{Timeout: 200 * time.Millisecond})
	if errdefs.CodeOf(err) != errdefs.Timeout || errdefs.LimitOf(err) != errdefs.LimitTimeout {
		t.Fatalf("err = %v, want timeout", err)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the nested call was not cancelled")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestCallToolDeepResult: a nested result nested past the JSON depth
// bound is refused like any JSON the realm parses.
func TestCallToolDeepResult(t *testing.T) {
	deep := make([]byte, 0, 2*(maxJSONDepth+10))
	for range maxJSONDepth + 5 {
		deep = append(deep, '[')
	}
	for range maxJSONDepth + 5 {
		deep = append(deep, ']')
	}
	h := &hostFuncs{callTool: func(context.Context, string, json.RawMessage) (*executors.HostCallResult, error) {
		return &executors.HostCallResult{Value: deep}, nil
	}}
	_, err := hostCall(t, `return await utils.callTool("deep")`, h, executors.Limits{})
	if errdefs.CodeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != errdefs.LimitDepth {
		t.Fatalf("err = %v, want limit_exceeded (depth)", err)
	}
}
