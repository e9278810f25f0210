package dispatch

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
	"github.com/toolcage/toolcage/toolspec"
)

// fakeLocal is a local kind made of a func: its spec compiles to itself.
type fakeLocal struct {
	run func(ctx context.Context, c *kind.LocalCall) (*kind.LocalResult, error)
}

func (fakeLocal) Name() toolspec.Kind                        { return "fake" }
func (fakeLocal) Decode(json.RawMessage) (kind.Spec, error)  { return nil, nil }
func (fakeLocal) Required() kind.Problem                     { return kind.Problem{} }
func (fakeLocal) ResetAfterCall() bool                       { return false }
func (f fakeLocal) Normalize()                               {}
func (f fakeLocal) Validate(kind.Tool) []kind.Problem        { return nil }
func (f fakeLocal) Check(kind.Tool) error                    { return nil }
func (f fakeLocal) Compile(kind.Tool) (kind.Compiled, error) { return f, nil }
func (f fakeLocal) Secrets(kind.Tool) ([]string, bool)       { return nil, false }
func (f fakeLocal) MarshalJSON() ([]byte, error)             { return []byte(`{}`), nil }
func (f fakeLocal) Run(ctx context.Context, c *kind.LocalCall) (*kind.LocalResult, error) {
	return f.run(ctx, c)
}
func (f fakeLocal) Build(context.Context, *kind.Call, *kind.Request) (*kind.Built, error) {
	return &kind.Built{}, nil
}

var _ kind.Local = fakeLocal{}

// TestLocalCalls: a local call is held to its timeout and output cap as
// an executor call is, gets its defaults filled, and is audited.
func TestLocalCalls(t *testing.T) {
	d := newPlanDispatcher(t)
	ctx := context.Background()
	cases := []struct {
		name    string
		limits  *catalog.Limits
		run     func(ctx context.Context, c *kind.LocalCall) (*kind.LocalResult, error)
		code    errdefs.Code
		result  string
		logs    int
		trunc   bool
		outcome string
	}{
		{name: "ok, defaults filled", run: func(_ context.Context, c *kind.LocalCall) (*kind.LocalResult, error) {
			a, err := c.DecodeArgs()
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(map[string]any{"n": a["n"], "worker": c.Worker, "caller": c.Caller.ID})
			return &kind.LocalResult{Value: b}, nil
		}, result: `{"caller":"me","n":7,"worker":""}`, outcome: store.OutcomeOK},
		{name: "honours ctx", limits: &catalog.Limits{Timeout: catalog.Duration(50 * time.Millisecond)},
			run: func(ctx context.Context, _ *kind.LocalCall) (*kind.LocalResult, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}, code: errdefs.Timeout, outcome: store.OutcomeFailed},
		{name: "ignores ctx", limits: &catalog.Limits{Timeout: catalog.Duration(20 * time.Millisecond)},
			run: func(context.Context, *kind.LocalCall) (*kind.LocalResult, error) {
				time.Sleep(60 * time.Millisecond)
				return &kind.LocalResult{Value: json.RawMessage(`1`)}, nil
			}, code: errdefs.Timeout, outcome: store.OutcomeFailed},
		{name: "result at the cap", limits: &catalog.Limits{Output: 10},
			run: func(context.Context, *kind.LocalCall) (*kind.LocalResult, error) {
				return &kind.LocalResult{Value: json.RawMessage(`"12345678"`), Logs: []kind.LogLine{{Level: "info", Message: "x"}}}, nil
			}, result: `"12345678"`, trunc: true, outcome: store.OutcomeOK},
		{name: "result over the cap", limits: &catalog.Limits{Output: 10},
			run: func(context.Context, *kind.LocalCall) (*kind.LocalResult, error) {
				return &kind.LocalResult{Value: json.RawMessage(`"123456789"`)}, nil
			}, code: errdefs.LimitExceeded, outcome: store.OutcomeFailed},
		{name: "tool error", run: func(context.Context, *kind.LocalCall) (*kind.LocalResult, error) {
			return &kind.LocalResult{Value: json.RawMessage(`null`), IsError: true, Error: "no such table"}, nil
		}, result: `null`, outcome: store.OutcomeError},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "local" + string(rune('a'+i))
			f := fakeLocal{run: tc.run}
			d.cfg.Kinds = kind.NewRegistry(f)
			def := &catalog.Definition{Name: name, Description: "d", Kind: "fake", Spec: f, Limits: tc.limits,
				Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","default":7}}}`)}
			res, err := catalog.Compile(&catalog.Tool{Def: def})
			if err != nil {
				t.Fatal(err)
			}
			c := &call{id: newCallID(), tool: name, kind: "fake", caller: principal.Caller{ID: "me", Type: "user"}, started: d.now()}
			out, err := d.run(ctx, c, res)
			if errdefs.CodeOf(err) != tc.code {
				t.Fatalf("err = %v, want code %q", err, tc.code)
			}
			if tc.code == "" && (string(out.Result) != tc.result || out.Truncated != tc.trunc) {
				t.Fatalf("out = %s truncated %v, want %s %v", out.Result, out.Truncated, tc.result, tc.trunc)
			}
			execs, err := d.cfg.Store.ListExecutions(ctx, store.ExecutionFilter{Tool: name})
			if err != nil || len(execs) != 1 || execs[0].Outcome != tc.outcome {
				t.Fatalf("audit %+v %v, want one %s record", execs, err, tc.outcome)
			}
			if tc.code != "" && !strings.Contains(execs[0].ErrorCode, string(tc.code)) {
				t.Errorf("audited code %q", execs[0].ErrorCode)
			}
		})
	}
}
