package js

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/jscheck"
	"github.com/toolcage/toolcage/principal"
)

var update = flag.Bool("update", false, "rewrite testdata/*/*.golden from the current output")

// A testdata case is a .js file of tool code. Leading comment lines of the
// form "// @name value" set up the request:
//
//	// @args {"a": 1}     the call's JSON arguments
//	// @timeout 100ms     limits
//	// @memory 64MiB
//	// @output 100
//	// @nocheck           skip the static check, to test the runtime alone
//
// The .golden file next to it holds the outcome as JSON.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(file), "testdata/"), ".js")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			req, nocheck := parseCase(t, string(src))
			settle(t)
			e := New(Config{})
			e.skipCodeCheck = nocheck
			res, err := e.Execute(context.Background(), req)
			got := renderOutcome(t, res, err)

			golden := strings.TrimSuffix(file, ".js") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("outcome differs from %s\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// parseCase builds the request for a testdata case.
func parseCase(t *testing.T, src string) (*executors.Request, bool) {
	t.Helper()
	req := &executors.Request{
		CallID: "call-1",
		Tool:   "golden_tool",
		Kind:   executors.KindJS,
		Caller: principal.Caller{ID: "uid:1000", Type: "user", Worker: "tester"},
		JS:     &executors.JSCall{Code: src},
	}
	nocheck := false
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "//") {
			break
		}
		d, ok := strings.CutPrefix(line, "// @")
		if !ok {
			continue
		}
		name, val, _ := strings.Cut(strings.TrimSpace(d), " ")
		var err error
		switch name {
		case "args":
			req.Args = json.RawMessage(val)
		case "timeout":
			req.Limits.Timeout, err = time.ParseDuration(val)
		case "memory":
			req.Limits.MemoryBytes, err = parseBytes(val)
		case "output":
			req.Limits.OutputBytes, err = parseBytes(val)
		case "nocheck":
			nocheck = true
		default:
			t.Fatalf("unknown directive %q", name)
		}
		if err != nil {
			t.Fatalf("directive %q: %v", line, err)
		}
	}
	return req, nocheck
}

func parseBytes(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			s, mult = n, m
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

// goldenOutcome is what a .golden file records.
type goldenOutcome struct {
	Result      json.RawMessage     `json:"result,omitempty"`
	IsError     bool                `json:"is_error,omitempty"`
	Error       string              `json:"error,omitempty"`
	Logs        []executors.LogLine `json:"logs,omitempty"`
	Truncated   bool                `json:"truncated,omitempty"`
	OutputBytes int64               `json:"output_bytes,omitempty"`
	Failure     *goldenFailure      `json:"failure,omitempty"`
}

type goldenFailure struct {
	Code  errdefs.Code `json:"code"`
	Limit string       `json:"limit,omitempty"`
	// Message is left out for broken limits: it carries measured sizes.
	Message string `json:"message,omitempty"`
}

func renderOutcome(t *testing.T, res *executors.Result, err error) []byte {
	t.Helper()
	var g goldenOutcome
	if err != nil {
		g.Failure = &goldenFailure{Code: errdefs.CodeOf(err), Limit: errdefs.LimitOf(err)}
		if g.Failure.Limit == "" {
			g.Failure.Message = err.Error()
		}
	} else {
		g = goldenOutcome{Result: res.Value, IsError: res.IsError, Error: res.Error, Logs: res.Logs, Truncated: res.Truncated, OutputBytes: res.OutputBytes}
		if res.Duration <= 0 {
			t.Errorf("Duration not set")
		}
		if n := int64(len(res.Value)) + logBytes(res.Logs); n != res.OutputBytes {
			t.Errorf("OutputBytes = %d, want %d", res.OutputBytes, n)
		}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func logBytes(lines []executors.LogLine) int64 {
	var n int64
	for _, l := range lines {
		n += int64(len(l.Message))
	}
	return n
}

// settle waits until no abandoned call is still running, so that what one
// test left behind cannot fail the next (a call that finds an abandoned
// one still running after its own timeout fails as executor_failed).
func settle(t testing.TB) {
	t.Helper()
	serial.Lock()
	defer serial.Unlock()
	if err := waitIdle(context.Background(), 5*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// run executes code with args on a fresh executor; check says whether the
// static check runs.
func run(t testing.TB, check bool, code, args string, lim executors.Limits) (*executors.Result, error) {
	t.Helper()
	settle(t)
	e := New(Config{})
	e.skipCodeCheck = !check
	return e.Execute(context.Background(), &executors.Request{
		CallID: "c1", Tool: "t", Args: json.RawMessage(args), Limits: lim,
		JS: &executors.JSCall{Code: code},
	})
}

func TestExecuteResult(t *testing.T) {
	res, err := run(t, true, "return args.a + args.b", `{"a": 40, "b": 2}`, executors.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != "42" || res.IsError || res.OutputBytes != 2 || res.Duration <= 0 {
		t.Errorf("result = %+v", res)
	}
}

func TestExecuteRequestErrors(t *testing.T) {
	e := New(Config{})
	for _, tt := range []struct {
		name string
		req  *executors.Request
		code errdefs.Code
	}{
		{"nil request", nil, errdefs.InvalidRequest},
		{"no js", &executors.Request{}, errdefs.InvalidRequest},
		{"code too big", &executors.Request{JS: &executors.JSCall{Code: strings.Repeat(" ", maxCodeBytes+1)}}, errdefs.InvalidRequest},
		{"bad args", &executors.Request{Args: json.RawMessage(`{`), JS: &executors.JSCall{Code: "return 1"}}, errdefs.InvalidArguments},
		{"policy", &executors.Request{JS: &executors.JSCall{Code: "return require('fs')"}}, errdefs.PolicyDenied},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.Execute(context.Background(), tt.req)
			if got := errdefs.CodeOf(err); got != tt.code {
				t.Errorf("code = %q (%v), want %q", got, err, tt.code)
			}
		})
	}
}

func TestPolicyDeniedWrapsCheckError(t *testing.T) {
	_, err := run(t, true, "const a = 1\nreturn eval('a')", "", executors.Limits{})
	var ce *jscheck.Error
	if !errors.As(err, &ce) || ce.Pattern != "eval(" || ce.Line != 2 {
		t.Fatalf("err = %v, want a wrapped CodeCheckError for eval( at line 2", err)
	}
	if errdefs.CodeOf(err) != errdefs.PolicyDenied {
		t.Errorf("code = %q", errdefs.CodeOf(err))
	}
}

func TestContextObject(t *testing.T) {
	e := New(Config{})
	res, err := e.Execute(context.Background(), &executors.Request{
		CallID: "call-9", Tool: "ctx_tool",
		Caller: principal.Caller{ID: "mcp:claude", Type: "llm", Worker: "ops"},
		JS:     &executors.JSCall{Code: "return context"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"toolName":"ctx_tool","callId":"call-9","caller":{"id":"mcp:claude","type":"llm","worker":"ops"}}`
	if string(res.Value) != want {
		t.Errorf("context = %s, want %s", res.Value, want)
	}
}

// TestFreshRealm pollutes every shared thing it can reach in one call and
// checks that the next call on the same executor sees none of it.
func TestFreshRealm(t *testing.T) {
	e := New(Config{})
	e.skipCodeCheck = true
	pollute := `
		Object.prototype.polluted = 'yes';
		Array.prototype.push = function () { return 'hijacked' };
		String.prototype.toUpperCase = () => 'hijacked';
		JSON.stringify = () => '"hijacked"';
		Math.random = () => 4;
		globalThis.leak = 42;
		var topLevel = 1;
		Object.defineProperty(Object.prototype, 'trap', { get() { return 'trap' } });
		Object.freeze(Object.prototype);
		Function.prototype.call = null;
		utils.hash = null;
		Promise.prototype.then = null;
		return 'done'`
	check := `
		const a = [];
		a.push(1);
		return {
			polluted: ({}).polluted === undefined,
			push: a.length === 1,
			upper: 'a'.toUpperCase() === 'A',
			random: Math.random() < 1,
			leak: typeof leak === 'undefined' && globalThis.leak === undefined,
			trap: ({}).trap === undefined,
			extensible: Object.isExtensible(Object.prototype),
			call: typeof Function.prototype.call === 'function',
			utils: typeof utils.hash === 'function',
		}`
	for i := range 2 {
		res, err := e.Execute(context.Background(), &executors.Request{JS: &executors.JSCall{Code: pollute}})
		if err != nil || res.IsError {
			t.Fatalf("pollute %d: %v %+v", i, err, res)
		}
		res, err = e.Execute(context.Background(), &executors.Request{JS: &executors.JSCall{Code: check}})
		if err != nil || res.IsError {
			t.Fatalf("check %d: %v %+v", i, err, res)
		}
		var got map[string]bool
		if err := json.Unmarshal(res.Value, &got); err != nil {
			t.Fatal(err)
		}
		for k, ok := range got {
			if !ok {
				t.Errorf("call %d: %s leaked from the previous call", i, k)
			}
		}
	}
}

// TestErrorLines checks that the line reported for an uncaught error is
// the line in the tool's code, for each way an error can arise.
func TestErrorLines(t *testing.T) {
	for _, tt := range []struct {
		name string
		code string
		want string
	}{
		{"first line", "throw new Error('a')", "Error: a (line 1)"},
		{"third line", "const x = 1;\nconst y = 2;\nthrow new Error('c')", "Error: c (line 3)"},
		{"after await", "await null;\nlet u;\nawait null;\nu.x", "TypeError: Cannot read property 'x' of undefined (line 4)"},
		{"in a nested function", "function f() {\n  return g();\n}\nfunction g() {\n  return undefinedName;\n}\nreturn f()", "ReferenceError: undefinedName is not defined (line 5)"},
		{"in a callback", "return [1, 2].map((x) => {\n  if (x === 2) throw new RangeError('two');\n  return x;\n})", "RangeError: two (line 2)"},
		{"from a util", "const rows = [1];\nreturn utils.chunk(rows, 0)", "RangeError: utils.chunk: size must be at least 1 (line 2)"},
		{"from a Go util", "\nreturn utils.hash('x', 'sha3')", `TypeError: utils.hash: unsupported algorithm "sha3" (use md5, sha1, sha256, sha384 or sha512) (line 2)`},
		{"syntax", "const a = 1;\nconst b = ;", "SyntaxError: Unexpected token ; (line 2)"},
		{"rejected promise", "\n\nreturn Promise.reject(new TypeError('no'))", "TypeError: no (line 3)"},
		{"CRLF lines", "const a = 1;\r\nthrow new Error('crlf')", "Error: crlf (line 2)"},
		{"stack overflow", "function f() {\n  return f() + 1;\n}\nreturn f()", "RangeError: Maximum call stack size exceeded (line 2)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, false, tt.code, "", executors.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || res.Error != tt.want {
				t.Errorf("error = %q (is_error %v), want %q", res.Error, res.IsError, tt.want)
			}
		})
	}
}

func Example() {
	e := New(Config{Timeout: 5 * time.Second})
	res, err := e.Execute(context.Background(), &executors.Request{
		Tool: "greet",
		Args: json.RawMessage(`{"name": "Ada Lovelace"}`),
		JS: &executors.JSCall{Code: `
			console.log("greeting", args.name);
			return { greeting: "Hello, " + args.name, slug: utils.slugify(args.name) };
		`},
	})
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(res.Value)
	os.Stdout.WriteString("\n" + res.Logs[0].Level + ": " + res.Logs[0].Message + "\n")
	// Output:
	// {"greeting":"Hello, Ada Lovelace","slug":"ada-lovelace"}
	// log: greeting Ada Lovelace
}

func BenchmarkExecuteTrivial(b *testing.B) {
	e := New(Config{})
	req := &executors.Request{
		Tool: "add", Args: json.RawMessage(`{"a": 1, "b": 2}`),
		JS: &executors.JSCall{Code: "return args.a + args.b"},
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.Execute(ctx, req)
		if err != nil || string(res.Value) != "3" {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkExecuteUtils(b *testing.B) {
	e := New(Config{})
	req := &executors.Request{
		Tool: "slug", Args: json.RawMessage(`{"title": "Héllo Wörld", "csv": "a,b\n1,2\n3,4"}`),
		JS: &executors.JSCall{Code: "console.log(args.title); return [utils.slugify(args.title), utils.hash(args.title), utils.parseCsv(args.csv)]"},
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Execute(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewRealm measures a fresh, locked-down realm with the prelude
// run, which every call pays for.
func BenchmarkNewRealm(b *testing.B) {
	c := newCall(&executors.Request{JS: &executors.JSCall{}}, executors.Limits{Timeout: time.Second, MemoryBytes: DefaultMemoryBytes, OutputBytes: DefaultOutputBytes})
	b.ReportAllocs()
	for b.Loop() {
		c.rt = nil
		if _, err := newRealm(c); err != nil {
			b.Fatal(err)
		}
	}
}
