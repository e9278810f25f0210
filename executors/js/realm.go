package js

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
	"github.com/toolcage/toolcage/errdefs"
)

// preludeSource is the JavaScript half of utils plus the helpers the
// executor calls in a realm. It evaluates to make(name).
//
//go:embed utils.js
var preludeSource string

// prelude is compiled once, on first use, and run in every realm. Not at
// package init: every executor kind (and the sandbox launcher stage) runs
// this package's init, and compiling takes ~2.7 ms of a cold start.
var prelude = sync.OnceValue(func() *goja.Program {
	return goja.MustCompile("utils.js", preludeSource, true)
})

// realm is one fresh JavaScript realm and what the executor holds in it.
type realm struct {
	c  *call
	rt *goja.Runtime
	// make builds a JavaScript helper by name (see utils.js).
	make goja.Callable
	// jsonParse is the realm's own JSON.parse, taken before any tool code.
	jsonParse goja.Callable
	// helpers built on first use: describe, inspect.
	helpers map[string]goja.Callable
	// arrayIsArray is the realm's Array.isArray, taken before any tool code.
	arrayIsArray goja.Callable
	// nativeDepth counts nested calls of the guarded built-ins.
	nativeDepth int
	// jsonFn is the executor's JSON serialiser as a function value, handed
	// to the helpers (jsonenc.go).
	jsonFn goja.Value
	// fetch is the realm's fetch, nil without the network permission
	// (fetch.go).
	fetch *fetcher
	// ctx bounds what the realm asks of others (fetches, nested calls):
	// cancelled once the call is stopped.
	ctx context.Context
	// nestedCalls counts utils.callTool calls (calltool.go).
	nestedCalls int
}

// newRealm makes a fresh runtime for c and locks it down:
//
//   - eval is deleted from the global object;
//   - the parser is switched off for this runtime, so every route to code
//     generation from strings (eval reached any way, Function,
//     (async) function and generator constructors found through
//     .constructor, Reflect.construct) throws EvalError. The tool's code
//     was compiled before the realm existed, and the prelude is a
//     precompiled program, so nothing legitimate needs the parser;
//   - goja has no require, process, module loader, WebAssembly,
//     SharedArrayBuffer or Atomics to remove;
//   - String.prototype.repeat/padStart/padEnd and Array.prototype.join/fill,
//     and the ArrayBuffer, typed array and Array constructors check their
//     allocation against the memory limit first (limits.go, alloc.go);
//   - JSON.stringify is the executor's own encoder and JSON.parse refuses
//     nesting deeper than maxJSONDepth first (jsonenc.go).
func newRealm(c *call) (*realm, error) {
	rt := goja.New()
	c.attach(rt)
	rt.SetMaxCallStackSize(maxCallStackSize)
	r := &realm{c: c, rt: rt}

	if err := rt.GlobalObject().Delete("eval"); err != nil {
		return nil, fmt.Errorf("delete eval: %w", err)
	}
	rt.SetParserOptions(noCodeGeneration(rt))
	if err := r.installGuards(); err != nil {
		return nil, err
	}
	if err := r.installJSON(); err != nil {
		return nil, err
	}
	if err := r.installAllocGuards(); err != nil {
		return nil, err
	}

	v, err := rt.RunProgram(prelude())
	if err != nil {
		return nil, fmt.Errorf("run prelude: %w", err)
	}
	var ok bool
	if r.make, ok = goja.AssertFunction(v); !ok {
		return nil, fmt.Errorf("prelude did not return a function")
	}
	if r.jsonParse, ok = goja.AssertFunction(rt.Get("JSON").ToObject(rt).Get("parse")); !ok {
		return nil, fmt.Errorf("JSON.parse is not a function")
	}
	return r, nil
}

// parserOptionType is the type of goja's parser options.
var parserOptionType = reflect.TypeFor[parser.Option]()

// noCodeGeneration returns a parser option that, once set on rt, makes any
// attempt to parse source throw EvalError inside the realm. goja parses
// source at run time only for eval and the Function constructors, and it
// applies the runtime's parser options first, so this switches off code
// generation from strings in the engine itself, whatever path the code took
// to reach it. parser.Option's argument type is unexported, hence
// reflect.MakeFunc.
//
// The error is the realm's EvalError, looked up when thrown: a tool that
// replaced the global EvalError gets its own thing thrown, but the source
// is never parsed either way.
func noCodeGeneration(rt *goja.Runtime) parser.Option {
	fn := reflect.MakeFunc(parserOptionType, func([]reflect.Value) []reflect.Value {
		const msg = "Code generation from strings is disabled in this sandbox"
		if ctor, ok := rt.Get("EvalError").(*goja.Object); ok {
			if e, err := rt.New(ctor, rt.ToValue(msg)); err == nil {
				panic(e)
			}
		}
		panic(rt.NewTypeError("%s", msg))
	})
	return fn.Interface().(parser.Option)
}

// installGuards wraps the built-ins that can allocate an arbitrary amount
// in one native step, so that they check the memory limit first.
func (r *realm) installGuards() error {
	rt := r.rt
	proto := func(ctor string) *goja.Object {
		return rt.Get(ctor).ToObject(rt).Get("prototype").ToObject(rt)
	}
	str, arr := proto("String"), proto("Array")
	for _, g := range []struct {
		obj   *goja.Object
		what  string
		name  string
		fresh bool
		size  func(goja.FunctionCall) float64
	}{
		{str, "String", "repeat", true, func(fc goja.FunctionCall) float64 {
			return float64(stringLength(fc.This)) * number(fc.Argument(0))
		}},
		{str, "String", "padStart", true, func(fc goja.FunctionCall) float64 {
			return number(fc.Argument(0)) - float64(stringLength(fc.This))
		}},
		{str, "String", "padEnd", true, func(fc goja.FunctionCall) float64 {
			return number(fc.Argument(0)) - float64(stringLength(fc.This))
		}},
		{arr, "Array", "join", true, func(fc goja.FunctionCall) float64 {
			sep := 1.0
			if s := fc.Argument(0); !goja.IsUndefined(s) {
				sep = float64(stringLength(s))
			}
			return (r.lengthOf(fc.This) - 1) * sep
		}},
		{arr, "Array", "fill", false, func(fc goja.FunctionCall) float64 {
			n := r.lengthOf(fc.This)
			start := relIndex(fc.Argument(1), 0, n)
			end := relIndex(fc.Argument(2), n, n)
			return (end - start) * valueBytes
		}},
	} {
		orig, ok := goja.AssertFunction(g.obj.Get(g.name))
		if !ok {
			return fmt.Errorf("%s is not a function", g.name)
		}
		what := g.what + ".prototype." + g.name
		size, fresh := g.size, g.fresh
		wrapped := func(fc goja.FunctionCall) goja.Value {
			n := size(fc)
			switch {
			case math.IsNaN(n) || n < 0:
				n = 0
			case n > math.MaxInt64/2:
				n = math.MaxInt64 / 2
			}
			if !r.c.reserve(int64(n), fresh, what) {
				return goja.Undefined()
			}
			// join on an array holding itself nested (toString calls
			// join) recurses in the engine once per level: bounded
			// like JSON nesting.
			r.nativeDepth++
			defer func() { r.nativeDepth-- }()
			if r.nativeDepth > maxJSONDepth {
				r.c.stop(errdefs.LimitError(errdefs.LimitDepth, "js: %s nests deeper than %d levels", what, maxJSONDepth))
				return goja.Undefined()
			}
			v, err := orig(fc.This, fc.Arguments...)
			if err != nil {
				panic(err)
			}
			return v
		}
		if err := g.obj.DefineDataProperty(g.name, rt.ToValue(wrapped), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	return nil
}

// valueBytes is what one array element costs goja at least.
const valueBytes = 16

// number is v as a number when it is a primitive, else 0: an object's
// valueOf is left for the built-in itself to call, once.
func number(v goja.Value) float64 {
	if _, ok := v.(*goja.Object); ok {
		return 0
	}
	return v.ToFloat()
}

// stringLength is v's length when v is a primitive string, else 0.
func stringLength(v goja.Value) int {
	if s, ok := v.(goja.String); ok {
		return s.Length()
	}
	return 0
}

// lengthOf reads v.length as a number, 0 for non-objects.
func (r *realm) lengthOf(v goja.Value) float64 {
	o, ok := v.(*goja.Object)
	if !ok {
		return 0
	}
	n := o.Get("length")
	if n == nil {
		return 0
	}
	return number(n)
}

// relIndex resolves a relative index argument the way Array methods do.
func relIndex(v goja.Value, def, n float64) float64 {
	if goja.IsUndefined(v) {
		return def
	}
	i := number(v)
	if math.IsNaN(i) {
		i = 0
	}
	if i < 0 {
		return max(n+i, 0)
	}
	return min(i, n)
}

// helper returns one of the executor's helpers from utils.js.
func (r *realm) helper(name string) (goja.Callable, error) {
	if f, ok := r.helpers[name]; ok {
		return f, nil
	}
	if r.jsonFn == nil {
		r.jsonFn = r.rt.ToValue(r.stringify)
	}
	v, err := r.make(goja.Undefined(), r.rt.ToValue(" "+name), r.jsonFn)
	if err != nil {
		return nil, err
	}
	f, ok := goja.AssertFunction(v)
	if !ok {
		return nil, fmt.Errorf("no helper %q", name)
	}
	if r.helpers == nil {
		r.helpers = make(map[string]goja.Callable, 3)
	}
	r.helpers[name] = f
	return f, nil
}

// parseArgs parses the call's JSON arguments inside the realm; no
// arguments at all is an empty object.
func (r *realm) parseArgs(raw json.RawMessage) (goja.Value, error) {
	text := strings.TrimSpace(string(raw))
	if text == "" {
		return r.rt.NewObject(), nil
	}
	if d := jsonDepth(text); d > maxJSONDepth {
		return nil, depthError("the arguments", d)
	}
	return r.jsonParse(goja.Undefined(), r.rt.ToValue(text))
}

// describeError formats a thrown value as "<Name>: <message> (line N)",
// N being the line in the tool's code where an Error was created (for a
// subclass of Error, where it was constructed, not the line of its
// super() call). Values that are not Errors become "Uncaught <value>".
func (r *realm) describeError(v goja.Value) (string, error) {
	f, err := r.helper("describe")
	if err != nil {
		return "", err
	}
	d, err := f(goja.Undefined(), v)
	if err != nil {
		return "", err
	}
	o := d.ToObject(r.rt)
	return o.Get("0").String() + lineSuffix(stackLine(o.Get("1").String(), int(o.Get("2").ToInteger()))), nil
}

// context builds the tool's context object.
func (r *realm) context() goja.Value {
	rt, req := r.rt, r.c.req
	caller := rt.NewObject()
	_ = caller.Set("id", req.Caller.ID)
	_ = caller.Set("type", req.Caller.Type)
	_ = caller.Set("worker", req.Caller.Worker)
	o := rt.NewObject()
	_ = o.Set("toolName", req.Tool)
	_ = o.Set("callId", req.CallID)
	_ = o.Set("caller", caller)
	return o
}

// consoleNames are the console methods; each logs at its own level.
var consoleNames = newNameSet("log", "info", "warn", "error", "debug")

// console builds the tool's console. Lines go to the call's output, not to
// any stream of the executor.
func (r *realm) console() goja.Value {
	return r.rt.NewDynamicObject(&lazyObject{names: consoleNames, build: func(name string) goja.Value {
		return r.rt.ToValue(func(fc goja.FunctionCall) goja.Value {
			if r.c.out.truncated {
				return goja.Undefined()
			}
			r.c.out.add(name, r.formatLog(fc.Arguments))
			return goja.Undefined()
		})
	}})
}

// formatLog joins console arguments with spaces: strings as they are,
// everything else through the realm's inspect helper (JSON for objects,
// "Name: message" for errors, 10n for a BigInt).
func (r *realm) formatLog(args []goja.Value) string {
	var sb strings.Builder
	for i, a := range args {
		if i > 0 {
			sb.WriteByte(' ')
		}
		if _, ok := a.(goja.String); ok || a == nil || goja.IsUndefined(a) || goja.IsNull(a) {
			sb.WriteString(a.String())
			continue
		}
		f, err := r.helper("inspect")
		if err == nil {
			var s goja.Value
			if s, err = f(goja.Undefined(), a); err == nil {
				sb.WriteString(s.String())
				continue
			}
		}
		panic(err)
	}
	return sb.String()
}

// nameSet is the fixed list of a lazy object's property names.
type nameSet struct {
	list []string
	set  map[string]bool
}

func newNameSet(names ...string) *nameSet {
	ns := &nameSet{list: names, set: make(map[string]bool, len(names))}
	for _, n := range names {
		ns.set[n] = true
	}
	return ns
}

// lazyObject is a read-only object whose properties are built on first
// access, so that a call pays only for the helpers it uses.
type lazyObject struct {
	names *nameSet
	build func(name string) goja.Value
	cache map[string]goja.Value
}

func (o *lazyObject) Get(key string) goja.Value {
	if v, ok := o.cache[key]; ok {
		return v
	}
	if !o.names.set[key] {
		return nil
	}
	v := o.build(key)
	if o.cache == nil {
		o.cache = make(map[string]goja.Value)
	}
	o.cache[key] = v
	return v
}

func (o *lazyObject) Set(string, goja.Value) bool { return false }

func (o *lazyObject) Has(key string) bool { return o.names.set[key] }

func (o *lazyObject) Delete(string) bool { return false }

func (o *lazyObject) Keys() []string { return o.names.list }

// Interface guards.
var _ goja.DynamicObject = (*lazyObject)(nil)
