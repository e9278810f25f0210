package executors_test

// The executor contract, checked the same way for every kind: each case runs
// once per kind (the factories) and once per transport (the executor called
// directly, and through go-plugin's in-process gRPC pair, which is what the
// daemon talks to). The shape of Nomad's executor tests.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	httpexec "github.com/toolcage/toolcage/executors/http"
	"github.com/toolcage/toolcage/executors/js"
	"github.com/toolcage/toolcage/executors/shell"
)

// scenario is what a case asks the tool to do; each factory spells it in its
// own kind.
type scenario int

const (
	greet  scenario = iota // succeed with "hello conformance"
	fail                   // fail on its own terms (is_error)
	hang                   // run past a 300 ms timeout
	flood                  // produce 100 kB against a 1000-byte cap
	noBody                 // a request of the kind carrying no call (the test clears it)
)

const (
	caseTimeout = 300 * time.Millisecond
	caseCap     = 1000
	greeting    = "hello conformance"
)

// factory makes one kind's executor and its requests.
type factory struct {
	new     func(t *testing.T) executors.Executor
	request func(t *testing.T, s scenario) *executors.Request
}

// executorFactories holds every kind; a kind added to the contract gets a
// factory here and runs every case.
var executorFactories = map[executors.Kind]factory{
	executors.KindJS: {
		new: func(t *testing.T) executors.Executor { return js.New(js.Config{}) },
		request: func(t *testing.T, s scenario) *executors.Request {
			code := map[scenario]string{
				greet: `return "hello " + args.who`,
				fail:  `throw new Error("boom conformance")`,
				hang:  `while (true) {}`,
				flood: `return "x".repeat(100000)`,
			}[s]
			return &executors.Request{Kind: executors.KindJS, Args: json.RawMessage(`{"who":"conformance"}`), JS: &executors.JSCall{Code: code}}
		},
	},
	executors.KindShell: {
		new: func(t *testing.T) executors.Executor {
			return shell.New(shell.Config{WorkRoot: t.TempDir(), Grace: 200 * time.Millisecond})
		},
		request: func(t *testing.T, s scenario) *executors.Request {
			call := map[scenario]*executors.ShellCall{
				greet: {Argv: []string{"echo", greeting}},
				fail:  {Command: "echo boom conformance >&2; exit 3"},
				hang:  {Argv: []string{"sleep", "30"}},
				flood: {Argv: []string{"head", "-c", "100000", "/dev/zero"}},
			}[s]
			return &executors.Request{Kind: executors.KindShell, Args: json.RawMessage(`{}`), Shell: call}
		},
	},
	executors.KindHTTP: {
		new: func(t *testing.T) executors.Executor { return httpexec.New(httpexec.Config{}) },
		request: func(t *testing.T, s scenario) *executors.Request {
			base := testServer(t)
			path := map[scenario]string{greet: "/greet", fail: "/fail", hang: "/hang", flood: "/flood"}[s]
			req := &executors.Request{Kind: executors.KindHTTP, Args: json.RawMessage(`{}`), HTTP: &executors.HTTPCall{
				Method: "GET", URL: base + path,
				// The server is on 127.0.0.1: named in both lists, as a
				// local development setup would.
				AllowedDomains: []string{"127.0.0.1"}, AllowPrivateHosts: []string{"127.0.0.1"},
			}}
			if s == flood {
				req.HTTP.MaxResponseBytes = caseCap
			}
			return req
		},
	},
}

// testServer is a real HTTP server on 127.0.0.1 for the http kind.
func testServer(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/greet":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"greeting":%q}`, greeting)
		case "/fail":
			http.Error(w, "boom conformance", http.StatusInternalServerError)
		case "/hang":
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		case "/flood":
			w.Write([]byte(strings.Repeat("x", 100000)))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// transports are the ways the daemon can reach an executor.
var transports = map[string]func(t *testing.T, impl executors.Executor) executors.Executor{
	"direct": func(t *testing.T, impl executors.Executor) executors.Executor { return impl },
	"grpc": func(t *testing.T, impl executors.Executor) executors.Executor {
		client, _ := plugin.TestPluginGRPCConn(t, false, executors.PluginMap(impl))
		// Close asks the server to shut down (go-plugin's controller); a
		// second Stop of our own would race with it.
		t.Cleanup(func() { client.Close() })
		raw, err := client.Dispense(executors.PluginName)
		if err != nil {
			t.Fatalf("dispense: %v", err)
		}
		e, ok := raw.(executors.Executor)
		if !ok {
			t.Fatalf("dispensed %T, not an executors.Executor", raw)
		}
		return e
	},
	// grpc+host: the Host stream open, as for the kinds that call back
	// (host.Key.Host).
	"grpc+host": func(t *testing.T, impl executors.Executor) executors.Executor {
		return hostPair(t, impl)
	},
}

// hostPair is an in-process go-plugin pair whose host answers Host
// callbacks.
func hostPair(t *testing.T, impl executors.Executor) executors.Executor {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, plugin.PluginSet{executors.PluginName: &executors.Plugin{Impl: impl, ServeHost: true}})
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(executors.PluginName)
	if err != nil {
		t.Fatalf("dispense: %v", err)
	}
	e, ok := raw.(executors.Executor)
	if !ok {
		t.Fatalf("dispensed %T, not an executors.Executor", raw)
	}
	return e
}

func TestConformance(t *testing.T) {
	cases := []struct {
		name   string
		s      scenario
		limits executors.Limits
		// deadline, when set, is the caller's own: ctx ends, no limit does
		deadline time.Duration
		check    func(t *testing.T, res *executors.Result, err error, took time.Duration)
	}{
		{name: "result", s: greet, check: func(t *testing.T, res *executors.Result, err error, _ time.Duration) {
			if err != nil || res == nil {
				t.Fatalf("res %v, err = %v", res, err)
			}
			if res.IsError || !json.Valid(res.Value) || !strings.Contains(string(res.Value), greeting) {
				t.Fatalf("result %+v (value %s), want %q in a valid JSON value", res, res.Value, greeting)
			}
			if res.OutputBytes <= 0 {
				t.Errorf("output bytes %d, want them counted", res.OutputBytes)
			}
		}},
		{name: "tool failure is a result", s: fail, check: func(t *testing.T, res *executors.Result, err error, _ time.Duration) {
			if err != nil || res == nil {
				t.Fatalf("res %v, err = %v, want a result with is_error", res, err)
			}
			if !res.IsError || res.Error == "" {
				t.Fatalf("result %+v, want is_error with a message", res)
			}
		}},
		{name: "timeout", s: hang, limits: executors.Limits{Timeout: caseTimeout}, check: func(t *testing.T, res *executors.Result, err error, took time.Duration) {
			wantCode(t, res, err, errdefs.Timeout, errdefs.LimitTimeout)
			if took > 10*time.Second {
				t.Errorf("stopped after %v", took)
			}
		}},
		{name: "caller's deadline", s: hang, deadline: caseTimeout, check: func(t *testing.T, res *executors.Result, err error, took time.Duration) {
			wantCode(t, res, err, errdefs.Timeout, errdefs.LimitTimeout)
			if took > 10*time.Second {
				t.Errorf("stopped after %v", took)
			}
		}},
		{name: "output cap", s: flood, limits: executors.Limits{OutputBytes: caseCap}, check: func(t *testing.T, res *executors.Result, err error, _ time.Duration) {
			wantCode(t, res, err, errdefs.LimitExceeded, errdefs.LimitOutput)
		}},
		{name: "executor error is no result", s: noBody, check: func(t *testing.T, res *executors.Result, err error, _ time.Duration) {
			wantCode(t, res, err, errdefs.InvalidRequest, "")
		}},
	}
	for kind, f := range executorFactories {
		for tname, transport := range transports {
			t.Run(string(kind)+"/"+tname, func(t *testing.T) {
				e := transport(t, f.new(t))
				for _, c := range cases {
					t.Run(c.name, func(t *testing.T) {
						req := f.request(t, c.s)
						if c.s == noBody {
							req.JS, req.Shell, req.HTTP = nil, nil, nil
						}
						req.CallID, req.Tool, req.Limits = "conf-"+c.name, "conformance", c.limits
						deadline := 60 * time.Second
						if c.deadline > 0 {
							deadline = c.deadline
						}
						ctx, cancel := context.WithTimeout(context.Background(), deadline)
						defer cancel()
						start := time.Now()
						res, err := e.Execute(ctx, req)
						c.check(t, res, err, time.Since(start))
					})
				}
			})
		}
	}
}

func wantCode(t *testing.T, res *executors.Result, err error, code errdefs.Code, limit string) {
	t.Helper()
	if res != nil {
		t.Errorf("a result came with the error: %+v", res)
	}
	if errdefs.CodeOf(err) != code || errdefs.LimitOf(err) != limit {
		t.Fatalf("err = %v (code %q, limit %q), want code %q, limit %q", err, errdefs.CodeOf(err), errdefs.LimitOf(err), code, limit)
	}
}
