package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/scrub"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// fakePool is a Pool built from a func field: the pipeline's tests run
// without an executor process.
type fakePool struct {
	ExecuteF func(ctx context.Context, key host.Key, req *executors.Request) (*executors.Result, error)
}

func (f *fakePool) Execute(ctx context.Context, key host.Key, req *executors.Request) (*executors.Result, error) {
	return f.ExecuteF(ctx, key, req)
}

// pipeline is a dispatcher over a real store and catalog and a fake pool.
type pipeline struct {
	d    *Dispatcher
	st   *store.Store
	cat  *catalog.Catalog
	pool *fakePool
}

// person is the caller of the pipeline tests.
var person = principal.Caller{Type: principal.TypeUser, ID: "uid:1000"}

// newPipeline makes a pipeline whose pool runs exec; mod, when set,
// changes the dispatcher's config first.
func newPipeline(t *testing.T, exec func(ctx context.Context, key host.Key, req *executors.Request) (*executors.Result, error), mod func(*Config)) *pipeline {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	scr, err := scrub.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &pipeline{st: st, cat: catalog.New(st), pool: &fakePool{ExecuteF: exec}}
	cfg := Config{Catalog: p.cat, Store: st, Pool: p.pool, Scrubber: scr}
	if mod != nil {
		mod(&cfg)
	}
	p.d = New(cfg)
	return p
}

func (p *pipeline) create(t *testing.T, raw string) *catalog.Tool {
	t.Helper()
	def, err := catalog.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	tool, err := p.cat.Create(context.Background(), def, person)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func (p *pipeline) call(tool, args string) (*Outcome, error) {
	return p.d.Call(context.Background(), CallRequest{Tool: tool, Arguments: json.RawMessage(args), Caller: person})
}

func (p *pipeline) records(t *testing.T, tool string) []*store.Execution {
	t.Helper()
	ex, err := p.st.ListExecutions(context.Background(), store.ExecutionFilter{Tool: tool, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

const adder = "name: adder\ndescription: add\nkind: js\nparameters: {type: object, properties: {a: {type: number}, b: {type: number}}, required: [a, b]}\njs: {code: 'return args.a + args.b'}\n"

// TestPipelineOnFakePool: one call from the resolved tool to its audit
// record, the executor faked: what the pool is handed (the key and the
// request), what comes back (scrubbed), and what is recorded, for a call
// that runs, fails in the tool, fails in the executor, or is refused
// before the pool is asked.
func TestPipelineOnFakePool(t *testing.T) {
	// A credential the scrubber knows, as a tool might print it.
	const leaked = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sXy"
	tests := []struct {
		name    string
		tool    string // "" = adder
		args    string
		result  *executors.Result
		err     error
		wantErr errdefs.Code
		outcome string
		ran     bool // the pool was asked
	}{
		{name: "runs", args: `{"a":1,"b":2}`, result: &executors.Result{Value: json.RawMessage(`3`)}, outcome: store.OutcomeOK, ran: true},
		{name: "the tool's own error", args: `{"a":1,"b":2}`, result: &executors.Result{Value: json.RawMessage(`null`), IsError: true, Error: "boom"}, outcome: store.OutcomeError, ran: true},
		{name: "a credential in the result is scrubbed", args: `{"a":1,"b":2}`, result: &executors.Result{Value: json.RawMessage(`"token ` + leaked + `"`),
			Logs: []executors.LogLine{{Level: "info", Message: leaked}}}, outcome: store.OutcomeOK, ran: true},
		{name: "the executor failed", args: `{"a":1,"b":2}`, err: &errdefs.Error{Code: errdefs.ExecutorFailed, Err: errors.New("executor exited")}, wantErr: errdefs.ExecutorFailed, outcome: store.OutcomeFailed, ran: true},
		{name: "timeout", args: `{"a":1,"b":2}`, err: &errdefs.Error{Code: errdefs.Timeout, Err: errors.New("ran past 1s")}, wantErr: errdefs.Timeout, outcome: store.OutcomeFailed, ran: true},
		{name: "invalid arguments never reach the pool", args: `{"a":"one"}`, wantErr: errdefs.InvalidArguments, outcome: store.OutcomeRefused},
		{name: "a disabled tool never reaches the pool", tool: "off", args: `{}`, wantErr: errdefs.ToolNotActive, outcome: store.OutcomeRefused},
		{name: "a blocked tool never reaches the pool", tool: "blocked", args: `{}`, wantErr: errdefs.PolicyDenied, outcome: store.OutcomeRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []host.Key
			var reqs []*executors.Request
			p := newPipeline(t, func(_ context.Context, key host.Key, req *executors.Request) (*executors.Result, error) {
				got, reqs = append(got, key), append(reqs, req)
				return tt.result, tt.err
			}, nil)
			p.create(t, adder)
			p.create(t, "name: off\ndescription: d\nkind: js\njs: {code: 'return 1'}\n")
			if _, err := p.cat.Disable(context.Background(), "off", person); err != nil {
				t.Fatal(err)
			}
			p.create(t, "name: blocked\ndescription: d\nkind: js\napproval: blocked\njs: {code: 'return 1'}\n")
			tool := tt.tool
			if tool == "" {
				tool = "adder"
			}
			out, err := p.call(tool, tt.args)
			if errdefs.CodeOf(err) != tt.wantErr && !(tt.wantErr == "" && err == nil) {
				t.Fatalf("call: %v, want %q", err, tt.wantErr)
			}
			if ran := len(got) > 0; ran != tt.ran {
				t.Fatalf("pool asked %d times, want ran=%v", len(got), tt.ran)
			}
			if tt.ran {
				want := host.Key{Kind: executors.KindJS, Isolation: catalog.IsolationProcess, Host: true}
				if len(got) != 1 || got[0] != want || reqs[0].JS == nil || reqs[0].JS.Code != "return args.a + args.b" {
					t.Fatalf("pool got %+v %+v, want one call on %+v", got, reqs, want)
				}
			}
			if err == nil {
				b, _ := json.Marshal(out)
				if strings.Contains(string(b), leaked) {
					t.Fatalf("the outcome holds the credential: %s", b)
				}
				if out.IsError != (tt.outcome == store.OutcomeError) {
					t.Fatalf("outcome %+v", out)
				}
			}
			recs := p.records(t, tool)
			if len(recs) != 1 || recs[0].Outcome != tt.outcome || (tt.wantErr != "" && recs[0].ErrorCode != string(tt.wantErr)) {
				t.Fatalf("records %+v, want one %s", recs, tt.outcome)
			}
			b, _ := json.Marshal(recs[0])
			if strings.Contains(string(b), leaked) {
				t.Fatalf("the record holds the credential: %s", b)
			}
		})
	}
}

// TestRateLimitsUnderConcurrentLoad: a tool's bucket of 20 under 80
// concurrent calls lets 20 run and refuses 60 with a retry hint, each
// refusal recorded and none counted as a use; a concurrency cap of one
// refuses a second call while the first runs.
func TestRateLimitsUnderConcurrentLoad(t *testing.T) {
	release := make(chan struct{})
	var running atomic.Int32
	p := newPipeline(t, func(ctx context.Context, key host.Key, req *executors.Request) (*executors.Result, error) {
		if strings.Contains(req.JS.Code, "slow") {
			running.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return &executors.Result{Value: json.RawMessage(`3`)}, nil
	}, func(c *Config) {
		c.Limiter = policy.NewRateLimiter(policy.RateLimitConfig{PerTool: policy.RateLimit{Rate: 0.001, Burst: 20},
			ToolConcurrency: map[string]int{"slow": 1}})
	})
	p.create(t, adder)
	var ok, limited, other atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				_, err := p.call("adder", `{"a":1,"b":2}`)
				var rle *policy.RateLimitedError
				switch errdefs.CodeOf(err) {
				case "":
					ok.Add(1)
				case errdefs.RateLimited:
					limited.Add(1)
					if !errors.As(err, &rle) || rle.RetryAfter <= 0 {
						t.Errorf("no retry hint: %v", err)
					}
				default:
					other.Add(1)
					t.Errorf("unexpected: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 20 || limited.Load() != 60 || other.Load() != 0 {
		t.Fatalf("ok %d, rate limited %d, other %d; want 20, 60, 0", ok.Load(), limited.Load(), other.Load())
	}
	refused := slices.DeleteFunc(p.records(t, "adder"), func(e *store.Execution) bool {
		return e.Outcome != store.OutcomeRefused || e.ErrorCode != string(errdefs.RateLimited)
	})
	tool, err := p.cat.Get(context.Background(), "adder")
	if err != nil {
		t.Fatal(err)
	}
	if len(refused) != 60 || tool.UsageCount != 20 {
		t.Fatalf("audit: %d refused records, usage %d; want 60, 20", len(refused), tool.UsageCount)
	}

	// A concurrency cap of one: a second call while one runs is refused.
	p.create(t, "name: slow\ndescription: slow\nkind: js\njs: {code: 'return \"slow\"'}\n")
	first := make(chan error, 1)
	go func() { _, err := p.call("slow", `{}`); first <- err }()
	for running.Load() == 0 {
		select {
		case err := <-first:
			t.Fatalf("the first call ended before it ran: %v", err)
		default:
			time.Sleep(time.Millisecond)
		}
	}
	if _, err := p.call("slow", `{}`); errdefs.CodeOf(err) != errdefs.RateLimited {
		t.Fatalf("a second call under a cap of one: %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the first call: %v", err)
	}
}
