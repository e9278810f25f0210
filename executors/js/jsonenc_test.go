package js

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

const testSecret = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"

// TestResultEscapes replaces every piece of the realm a tool could use to
// write its result as escaped JSON; the result text must hold the secret
// verbatim each time, so that the scrubber, which reads text, finds it.
func TestResultEscapes(t *testing.T) {
	args := `{"secret": "` + testSecret + `"}`
	escaper := `const esc = (s) => '"' + [...String(s)].map((c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')).join('') + '"';`
	for _, tt := range []struct {
		name string
		code string
	}{
		{"stringify replaced", escaper + "JSON.stringify = (v) => esc(v); return args.secret"},
		{"stringify replaced object", escaper + "JSON.stringify = (v) => '{\"k\":' + esc(v.k) + '}'; return { k: args.secret }"},
		{"stringify defined", escaper + "Object.defineProperty(JSON, 'stringify', { value: (v) => esc(v) }); return [args.secret]"},
		{"JSON replaced", escaper + "JSON = { stringify: (v) => esc(v), parse: JSON.parse }; return args.secret"},
		{"global JSON deleted", "delete globalThis.JSON; return { s: args.secret }"},
		{"toJSON on object", escaper + "return { toJSON() { return { k: args.secret, escaped: esc('x') }; } }"},
		{"rawJSON", escaper + "return { s: JSON.rawJSON(esc(args.secret)) }"},
		{"rawJSON in stringify", escaper + "return JSON.parse(JSON.stringify([JSON.rawJSON(esc(args.secret))]))"},
		{"rawJSON top", escaper + "return JSON.rawJSON(esc(args.secret))"},
		{"toJSON on prototype", "Object.prototype.toJSON = function () { return { wrapped: args.secret }; }; return {}"},
		{"Date toJSON", "Date.prototype.toJSON = () => args.secret; return { d: new Date(0) }"},
		{"String object", "return { s: new String(args.secret) }"},
		{"getter", "return { get s() { return args.secret; } }"},
		{"proxy", "return new Proxy({}, { ownKeys: () => ['s'], getOwnPropertyDescriptor: () => ({ value: args.secret, enumerable: true, configurable: true }), get: () => args.secret })"},
		{"key", "return { [args.secret]: 1 }"},
		{"Symbol.toPrimitive", "const o = { [Symbol.toPrimitive]: () => 'x' }; return { o, s: args.secret }"},
		{"array join replaced", "Array.prototype.join = () => 'x'; return [args.secret]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, false, tt.code, args, executors.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("tool error: %s", res.Error)
			}
			if !strings.Contains(string(res.Value), testSecret) {
				t.Errorf("result %s does not hold the secret verbatim", res.Value)
			}
			if !json.Valid(res.Value) {
				t.Errorf("result %s is not JSON", res.Value)
			}
		})
	}
}

// TestReplacedStringifyInvalid: whatever a replaced JSON.stringify
// returns, the result is still valid JSON (it used to be an internal
// error when it returned invalid JSON).
func TestReplacedStringifyInvalid(t *testing.T) {
	for _, repl := range []string{"() => '{'", "() => undefined", "() => ({})", "() => { throw new Error('no') }", "() => '\\u0000'", "null", "42"} {
		res, err := run(t, false, "JSON.stringify = "+repl+"; return { a: [1, 'two', null] }", "", executors.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", repl, err)
		}
		if string(res.Value) != `{"a":[1,"two",null]}` {
			t.Errorf("%s: result %s", repl, res.Value)
		}
	}
}

// TestLogsCanonical: console lines serialise objects with the executor's
// encoder too.
func TestLogsCanonical(t *testing.T) {
	code := `JSON.stringify = (v) => '"\\u0073k"'; console.log({ s: args.secret }); console.log([args.secret]); return 1`
	res, err := run(t, false, code, `{"secret": "`+testSecret+`"}`, executors.Limits{})
	if err != nil || res.IsError {
		t.Fatal(err, res)
	}
	if len(res.Logs) != 2 || res.Logs[0].Message != `{"s":"`+testSecret+`"}` || res.Logs[1].Message != `["`+testSecret+`"]` {
		t.Errorf("logs = %+v", res.Logs)
	}
}

// TestEncoderMatchesStringify holds the encoder to goja's own
// JSON.stringify on values that do not defeat it.
func TestEncoderMatchesStringify(t *testing.T) {
	for _, expr := range []string{
		`1`, `-0`, `1.5e300`, `NaN`, `-Infinity`, `0.1 + 0.2`, `2 ** 53`, `true`, `null`, `undefined`,
		`"plain"`, `"quote \" back \\ slash"`, `"\n\r\t\b\f\u0001\u001f\u007f"`, `"<script>&amp;</script>"`,
		`"héllo ✓ \ud83d\ude00"`, `"lone \ud800 high"`, `"lone \udfff low"`, `"\udc00\ud800"`, `"\u2028\u2029"`,
		`[]`, `{}`, `[undefined, () => 1, Symbol('s'), null]`, `{ a: undefined, b: () => 1, c: Symbol('x'), d: 1 }`,
		`{ [Symbol('k')]: 1, k: 2 }`, `new Date(0)`, `{ d: new Date(86400000) }`, `new Map([[1, 2]])`, `new Set([1])`,
		`new Number(3)`, `new String('s')`, `new Boolean(false)`, `/re/g`, `new Error('x')`,
		`[1, [2, [3, [4]]]]`, `{ a: { b: { c: {} } } }`, `new Uint8Array([1, 2, 3])`, `new ArrayBuffer(4)`,
		`Object.assign(Object.create({ inherited: 1 }), { own: 2 })`, `Object.defineProperty({}, 'hidden', { value: 1 })`,
		`{ 2: 'b', 1: 'a', x: 'c', [-1]: 'd' }`, `{ toJSON() { return { replaced: true }; } }`, `{ toJSON: 1 }`,
		`{ toJSON(k) { return 'key:' + k; } }`, `{ nested: { toJSON(k) { return 'key:' + k; } } }`,
		`[{ toJSON(k) { return k; } }]`, `Object.create(null)`, `[,,1]`, `{ '': 1, 'with space': 2, 'é': 3 }`,
		`new Proxy([1, 2], {})`, `new Proxy({ a: 1 }, {})`, `(function () { return arguments; })(1, 2)`,
	} {
		for _, tail := range []string{``, `, null, 2`, `, null, '\t-'`, `, ['a', 'd', 1]`, `, (k, v) => typeof v === 'number' ? v * 2 : v`, `, null, 20`, `, null, new Number(3)`} {
			src := "JSON.stringify(" + expr + tail + ")"
			prog, err := goja.Compile("t.js", src, false)
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			want, wantErr := goja.New().RunProgram(prog)
			r := testRealm(t)
			got, gotErr := r.rt.RunProgram(prog)
			if (wantErr == nil) != (gotErr == nil) {
				t.Errorf("%s: error %v, goja's %v", src, gotErr, wantErr)
				continue
			}
			if wantErr != nil {
				continue
			}
			if !want.SameAs(got) && want.String() != got.String() {
				t.Errorf("%s\n got: %s\nwant: %s", src, got, want)
			}
		}
	}
}

// testRealm makes a fresh realm outside any call.
func testRealm(t testing.TB) *realm {
	t.Helper()
	c := newCall(&executors.Request{JS: &executors.JSCall{}}, executors.Limits{Timeout: time.Minute, MemoryBytes: DefaultMemoryBytes, OutputBytes: DefaultOutputBytes})
	r, err := newRealm(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestJSONErrorsStillThrow: what JSON.stringify throws is still thrown,
// and results that cannot be serialised are the tool's error.
func TestJSONErrorsStillThrow(t *testing.T) {
	for _, tt := range []struct{ code, want string }{
		{"const o = {}; o.o = o; try { JSON.stringify(o) } catch (e) { return e.name + ': ' + e.message }", `"TypeError: Converting circular structure to JSON"`},
		{"try { JSON.stringify({ b: 1n }) } catch (e) { return e.message }", `"Do not know how to serialize a BigInt"`},
		{"try { JSON.stringify({ get x() { throw new RangeError('getter') } }) } catch (e) { return e.message }", `"getter"`},
		{"return JSON.parse('{\"a\":[1,{\"b\":2}]}', (k, v) => typeof v === 'number' ? v + 1 : v)", `{"a":[2,{"b":3}]}`},
		{"try { JSON.parse('{') } catch (e) { return e.name }", `"SyntaxError"`},
	} {
		res, err := run(t, false, tt.code, "", executors.Limits{})
		if err != nil || res.IsError || string(res.Value) != tt.want {
			t.Errorf("%s: %v %+v, want %s", tt.code, err, res, tt.want)
		}
	}
	res, err := run(t, false, "return { get x() { throw new RangeError('from a getter') } }", "", executors.Limits{})
	if err != nil || !res.IsError || !strings.HasPrefix(res.Error, "RangeError: from a getter") {
		t.Errorf("getter in result: %v %+v", err, res)
	}
}

// TestDepthLimits: every way to nest deeply ends in limit_exceeded naming
// the depth limit, never in a crash, a hang or an internal error.
func TestDepthLimits(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	deepObj := strings.Repeat(`{"a":`, 50000) + "1" + strings.Repeat("}", 50000)
	for _, tt := range []struct {
		name, code, args string
	}{
		{"result objects", "let o = {}; for (let i = 0; i < 100000; i++) o = { a: o }; return o", ""},
		{"result arrays", "let a = []; for (let i = 0; i < 100000; i++) a = [a]; return a", ""},
		{"result toJSON lazy", "const o = { toJSON() { return [this]; } }; return o", ""},
		{"result getter lazy", "const mk = () => ({ get a() { return mk(); } }); return mk()", ""},
		{"result proxy lazy", "const mk = () => new Proxy({}, { ownKeys: () => ['a'], getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }), get: () => mk() }); return mk()", ""},
		{"stringify deep", "let o = {}; for (let i = 0; i < 100000; i++) o = { a: o }; return JSON.stringify(o).length", ""},
		{"stringify deep caught", "let a = []; for (let i = 0; i < 100000; i++) a = [a]; try { JSON.stringify(a) } catch (e) {} return 'survived'", ""},
		{"stringify replacer lazy", "return JSON.stringify({}, function (k, v) { return [v]; })", ""},
		{"log deep", "let o = {}; for (let i = 0; i < 100000; i++) o = { a: o }; console.log(o); return 1", ""},
		{"parse deep arrays", "return JSON.parse('['.repeat(100000) + ']'.repeat(100000))", ""},
		{"parse deep objects", "return JSON.parse('{\"a\":'.repeat(100000) + '1' + '}'.repeat(100000))", ""},
		{"parse deep caught", "try { JSON.parse('['.repeat(2000) + ']'.repeat(2000)) } catch (e) {} return 'survived'", ""},
		{"parse deep via utils", "return utils.parseJson('['.repeat(5000))", ""},
		{"parse String object", "return JSON.parse(new String('['.repeat(5000)))", ""},
		{"join nested", "let a = []; for (let i = 0; i < 100000; i++) a = [a, 1]; return a.join().length", ""},
		{"toString nested", "let a = []; for (let i = 0; i < 100000; i++) a = [a]; return String(a).length", ""},
		{"template nested", "let a = [1]; for (let i = 0; i < 100000; i++) a = [a]; return `${a}`", ""},
		{"args deep arrays", "return 1", deep},
		{"args deep objects", "return 1", deepObj},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(t, false, tt.code, tt.args, executors.Limits{MemoryBytes: 256 << 20, Timeout: time.Minute})
			if errdefs.CodeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != errdefs.LimitDepth {
				t.Fatalf("got %v (%q %q) %+v, want limit_exceeded depth", err, errdefs.CodeOf(err), errdefs.LimitOf(err), res)
			}
			if !strings.Contains(err.Error(), "1000") {
				t.Errorf("message %q does not name the limit", err)
			}
		})
	}
	// At the limit itself nothing is refused.
	res, err := run(t, false, "let a = []; for (let i = 1; i < 1000; i++) a = [a]; return JSON.stringify(JSON.parse(JSON.stringify(a))).length", "", executors.Limits{})
	if err != nil || res.IsError || string(res.Value) != "2000" {
		t.Errorf("depth 1000: %v %+v", err, res)
	}
}

// TestResultSizeBounded: a result over the output limit is refused while
// it is written, not after a gigabyte of "null,".
func TestResultSizeBounded(t *testing.T) {
	for _, code := range []string{
		"const a = []; a.length = 2 ** 32 - 1; return a",
		"return new Proxy([], { get: (t, k) => k === 'length' ? 2 ** 53 - 1 : undefined })",
		"const a = []; a[2 ** 31] = 1; return a",
		"const s = 'x'.repeat(1 << 20); return [s, s, s, s]",
	} {
		start := time.Now()
		_, err := run(t, false, code, "", executors.Limits{OutputBytes: 1 << 20, Timeout: time.Minute})
		if errdefs.CodeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != errdefs.LimitOutput {
			t.Errorf("%s: %v, want limit_exceeded output", code, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: took %v", code, d)
		}
	}
}

func FuzzEncoder(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null,true]}`, `"\ud800"`, `[[[[]]]]`, `{"":{"":""}}`, `1e308`, `"\u2028<>&"`} {
		f.Add(s)
	}
	r := testRealm(f)
	plain := goja.New()
	f.Fuzz(func(t *testing.T, text string) {
		if jsonDepth(text) > maxJSONDepth {
			return
		}
		parse, _ := goja.AssertFunction(plain.Get("JSON").ToObject(plain).Get("parse"))
		v, err := parse(goja.Undefined(), plain.ToValue(text))
		if err != nil {
			return
		}
		stringify, _ := goja.AssertFunction(plain.Get("JSON").ToObject(plain).Get("stringify"))
		want, err := stringify(goja.Undefined(), v)
		if err != nil {
			t.Fatal(err)
		}
		mine, _ := goja.AssertFunction(r.rt.Get("JSON").ToObject(r.rt).Get("parse"))
		v2, err := mine(goja.Undefined(), r.rt.ToValue(text))
		if err != nil {
			t.Fatalf("realm parse failed where goja's did not: %v", err)
		}
		got, err := r.serialise(v2)
		if err != nil {
			t.Fatal(err)
		}
		if got != want.String() {
			t.Fatalf("encoder %s, goja %s", got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Fatalf("invalid JSON %s", got)
		}
	})
}
