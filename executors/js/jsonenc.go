package js

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/toolcage/toolcage/errdefs"
)

// Results, JSON.stringify and console lines are serialised here, in Go,
// never by the realm's own JSON.stringify, which a tool can replace: a
// replaced stringify could write a secret as "\u0073\u0065..." escapes
// that every JSON parser decodes back to the secret while the scrubber,
// which reads the text, sees no secret at all. This encoder writes each
// string one way only: characters as themselves, escaping only '"', '\',
// control characters and lone surrogates (as JSON.stringify does), so the
// text holds every string verbatim.
//
// The semantics are JSON.stringify's: toJSON is honoured (Date's gives the
// ISO string), boxed primitives are unwrapped, undefined, functions and
// symbols are left out of objects and become null in arrays, NaN and
// Infinity become null, a BigInt or a cycle throws TypeError. What toJSON,
// a getter or a replacer returns is encoded by the same rules, so none of
// them can change how a string is written. Nesting deeper than
// maxJSONDepth and text longer than the encoder's byte budget stop the
// call with limit_exceeded instead of recursing or growing without bound.

// maxJSONDepth bounds the nesting of objects and arrays in anything the
// executor serialises or parses: results, JSON.stringify, JSON.parse and
// the call's arguments. The daemon and its clients decode results with
// parsers that stop at depth 10000 (Go's encoding/json) or recurse, so a
// result must stay far below that.
const maxJSONDepth = 1000

// jsonEncoder serialises goja values to JSON text.
type jsonEncoder struct {
	r   *realm
	buf strings.Builder
	// what names the operation in limit errors: "result", "JSON.stringify".
	what string
	// budget is how many bytes the text may reach; exceeding it stops the
	// call with limitErr.
	budget   int
	limitErr func(n int) *errdefs.Error

	replacer goja.Callable
	props    []string // replacer array: the only keys written
	gap      string
	indent   string
	stack    []*goja.Object
}

// encode writes v as the top-level value and reports whether it produced
// anything (false for undefined, functions and symbols).
func (e *jsonEncoder) encode(v goja.Value) bool {
	holder := e.r.rt.NewObject()
	if err := holder.Set("", v); err != nil {
		panic(err)
	}
	return e.str("", v, holder)
}

// abort stops the call with err and unwinds the encoder by throwing. The
// exception can be caught by tool code, but the stopped call is
// interrupted at its next instruction.
func (e *jsonEncoder) abort(err *errdefs.Error) {
	e.r.c.stop(err)
	panic(e.r.rt.NewTypeError("%s", err.Error()))
}

// grow checks the budget after a write.
func (e *jsonEncoder) grow() {
	if e.buf.Len() > e.budget {
		e.abort(e.limitErr(e.buf.Len()))
	}
}

func (e *jsonEncoder) str(key string, value goja.Value, holder *goja.Object) bool {
	rt := e.r.rt
	if o, ok := value.(*goja.Object); ok || goja.IsBigInt(value) {
		var obj *goja.Object
		if ok {
			obj = o
		} else {
			obj = value.ToObject(rt)
		}
		if toJSON, ok := goja.AssertFunction(obj.Get("toJSON")); ok {
			v, err := toJSON(value, rt.ToValue(key))
			if err != nil {
				panic(err)
			}
			value = v
		}
	}
	if e.replacer != nil {
		v, err := e.replacer(holder, rt.ToValue(key), value)
		if err != nil {
			panic(err)
		}
		value = v
	}
	if o, ok := value.(*goja.Object); ok {
		switch o.ClassName() {
		case "Number":
			value = rt.ToValue(o.ToFloat())
		case "String":
			value = o.ToString()
		case "Boolean":
			if b, ok := o.Export().(bool); ok {
				value = rt.ToValue(b)
			}
		case "BigInt":
			panic(rt.NewTypeError("Do not know how to serialize a BigInt"))
		case "RawJSON":
			// JSON.rawJSON text would be written as it is, escapes and
			// all: decode it and write the value again.
			e.raw(o.Get("rawJSON").String())
			e.grow()
			return true
		}
	}
	switch {
	case value == nil || goja.IsUndefined(value):
		return false
	case goja.IsNull(value):
		e.buf.WriteString("null")
	case goja.IsBigInt(value):
		panic(rt.NewTypeError("Do not know how to serialize a BigInt"))
	case goja.IsString(value):
		e.quote(value.(goja.String))
	case goja.IsNumber(value):
		f := value.ToFloat()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			e.buf.WriteString("null")
		} else {
			e.buf.WriteString(value.String())
		}
	default:
		switch v := value.(type) {
		case *goja.Object:
			if _, ok := goja.AssertFunction(v); ok {
				return false
			}
			return e.object(v)
		case *goja.Symbol:
			return false
		}
		// Booleans: the only primitive left.
		if value.ToBoolean() {
			e.buf.WriteString("true")
		} else {
			e.buf.WriteString("false")
		}
	}
	e.grow()
	return true
}

// raw writes JSON.rawJSON's text, which the engine checked to be one
// JSON primitive, with its string (if any) written the one canonical way.
func (e *jsonEncoder) raw(text string) {
	var v any
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		panic(e.r.rt.NewTypeError("invalid raw JSON: %v", err))
	}
	switch v := v.(type) {
	case string:
		e.quoteString(strings.ToValidUTF8(v, "\ufffd"))
	case json.Number:
		e.buf.WriteString(v.String())
	case bool:
		e.buf.WriteString(strconv.FormatBool(v))
	case nil:
		e.buf.WriteString("null")
	default:
		panic(e.r.rt.NewTypeError("raw JSON is not a primitive"))
	}
}

// object writes an array or object, guarding against cycles and depth.
func (e *jsonEncoder) object(o *goja.Object) bool {
	for _, s := range e.stack {
		if s.SameAs(o) {
			panic(e.r.rt.NewTypeError("Converting circular structure to JSON"))
		}
	}
	if len(e.stack) >= maxJSONDepth {
		e.abort(errdefs.LimitError(errdefs.LimitDepth, "js: %s nests deeper than %d levels", e.what, maxJSONDepth))
	}
	e.stack = append(e.stack, o)
	defer func() { e.stack = e.stack[:len(e.stack)-1] }()
	stepback := e.indent
	e.indent += e.gap
	defer func() { e.indent = stepback }()
	if e.r.isArray(o) {
		e.array(o)
	} else {
		e.plain(o)
	}
	return true
}

func (e *jsonEncoder) newline() {
	if e.gap != "" {
		e.buf.WriteByte('\n')
		e.buf.WriteString(e.indent)
	}
}

func (e *jsonEncoder) array(o *goja.Object) {
	n := toLength(o.Get("length"))
	if n == 0 {
		e.buf.WriteString("[]")
		return
	}
	e.buf.WriteByte('[')
	for i := int64(0); i < n; i++ {
		if i > 0 {
			e.buf.WriteByte(',')
		}
		e.newline()
		k := strconv.FormatInt(i, 10)
		if !e.str(k, o.Get(k), o) {
			e.buf.WriteString("null")
		}
		// A sparse array of length 2**32-1 writes "null" forever: the
		// budget ends it.
		e.grow()
	}
	e.indent = e.indent[:len(e.indent)-len(e.gap)]
	e.newline()
	e.buf.WriteByte(']')
}

func (e *jsonEncoder) plain(o *goja.Object) {
	keys := e.props
	if keys == nil {
		keys = o.Keys()
	}
	e.buf.WriteByte('{')
	empty := true
	for _, k := range keys {
		mark := e.buf.Len()
		if !empty {
			e.buf.WriteByte(',')
		}
		e.newline()
		e.quoteString(k)
		e.buf.WriteByte(':')
		if e.gap != "" {
			e.buf.WriteByte(' ')
		}
		if e.str(k, o.Get(k), o) {
			empty = false
			continue
		}
		// strings.Builder cannot truncate; rebuild the prefix.
		s := e.buf.String()[:mark]
		e.buf.Reset()
		e.buf.WriteString(s)
	}
	if !empty {
		e.indent = e.indent[:len(e.indent)-len(e.gap)]
		e.newline()
	}
	e.buf.WriteByte('}')
}

// quote writes a JavaScript string: UTF-16 code units, decoded pairwise.
func (e *jsonEncoder) quote(s goja.String) {
	e.buf.WriteByte('"')
	n := s.Length()
	for i := 0; i < n; i++ {
		c := rune(s.CharAt(i))
		if utf16.IsSurrogate(c) {
			if c < 0xdc00 && i+1 < n {
				if d := rune(s.CharAt(i + 1)); d >= 0xdc00 && d <= 0xdfff {
					e.buf.WriteRune(utf16.DecodeRune(c, d))
					i++
					continue
				}
			}
			e.buf.WriteString(`\u`)
			e.buf.WriteString(strconv.FormatInt(int64(c), 16))
			continue
		}
		e.char(c)
	}
	e.buf.WriteByte('"')
}

// quoteString writes a Go string (a property key, valid UTF-8 or with
// goja's replacement of lone surrogates).
func (e *jsonEncoder) quoteString(s string) {
	e.buf.WriteByte('"')
	for _, c := range s {
		e.char(c)
	}
	e.buf.WriteByte('"')
}

const hexDigits = "0123456789abcdef"

func (e *jsonEncoder) char(c rune) {
	switch c {
	case '"', '\\':
		e.buf.WriteByte('\\')
		e.buf.WriteByte(byte(c))
	case '\b':
		e.buf.WriteString(`\b`)
	case '\t':
		e.buf.WriteString(`\t`)
	case '\n':
		e.buf.WriteString(`\n`)
	case '\f':
		e.buf.WriteString(`\f`)
	case '\r':
		e.buf.WriteString(`\r`)
	default:
		if c < 0x20 {
			e.buf.WriteString(`\u00`)
			e.buf.WriteByte(hexDigits[c>>4])
			e.buf.WriteByte(hexDigits[c&0xf])
			return
		}
		if c < utf8.RuneSelf {
			e.buf.WriteByte(byte(c))
			return
		}
		e.buf.WriteRune(c)
	}
}

// toLength is ECMAScript ToLength for an array's length.
func toLength(v goja.Value) int64 {
	if v == nil {
		return 0
	}
	f := v.ToFloat()
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f > 1<<53-1:
		return 1<<53 - 1
	}
	return int64(f)
}

// serialise encodes a tool's result; undefined (and anything else JSON
// leaves out) becomes null. It runs as a native function so that
// exceptions thrown by toJSON or getters, and interrupts, come back as
// errors.
func (r *realm) serialise(v goja.Value) (string, error) {
	limit := int(min(r.c.lim.OutputBytes, math.MaxInt32))
	e := &jsonEncoder{r: r, what: "result", budget: limit, limitErr: func(n int) *errdefs.Error {
		return errdefs.LimitError(errdefs.LimitOutput, "js: result is over %d bytes, the output limit", limit)
	}}
	var out string
	f, _ := goja.AssertFunction(r.rt.ToValue(func(goja.FunctionCall) goja.Value {
		if e.encode(v) {
			out = e.buf.String()
		} else {
			out = "null"
		}
		return goja.Undefined()
	}))
	_, err := f(goja.Undefined())
	return out, err
}

// newEncoder returns an encoder for text held in memory, bounded by the
// call's memory limit.
func (r *realm) newEncoder(what string) *jsonEncoder {
	return &jsonEncoder{r: r, what: what, budget: r.stringBudget(), limitErr: func(n int) *errdefs.Error {
		return errdefs.LimitError(errdefs.LimitMemory, "js: %s would allocate over %s, over the call's %s memory limit", what, sizeString(uint64(n)), sizeString(uint64(r.c.lim.MemoryBytes)))
	}}
}

// encodeJSON serialises v from inside a native function (exceptions
// propagate as panics); undefined becomes null.
func (r *realm) encodeJSON(v goja.Value) string {
	e := r.newEncoder("JSON body")
	if !e.encode(v) {
		return "null"
	}
	return e.buf.String()
}

// stringify is the realm's JSON.stringify(value, replacer, space).
func (r *realm) stringify(fc goja.FunctionCall) goja.Value {
	e := r.newEncoder("JSON.stringify")
	if rep, ok := fc.Argument(1).(*goja.Object); ok {
		if f, ok := goja.AssertFunction(rep); ok {
			e.replacer = f
		} else if r.isArray(rep) {
			e.props = []string{}
			seen := map[string]bool{}
			for i, n := int64(0), toLength(rep.Get("length")); i < n; i++ {
				item := rep.Get(strconv.FormatInt(i, 10))
				if o, ok := item.(*goja.Object); ok && o.ClassName() != "Number" && o.ClassName() != "String" {
					continue
				}
				if item == nil || !goja.IsString(item) && !goja.IsNumber(item) && !isBoxed(item) {
					continue
				}
				if k := item.String(); !seen[k] {
					seen[k] = true
					e.props = append(e.props, k)
				}
			}
		}
	}
	e.gap = jsonGap(fc.Argument(2))
	if !e.encode(fc.Argument(0)) {
		return goja.Undefined()
	}
	return r.rt.ToValue(e.buf.String())
}

func isBoxed(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	return ok && (o.ClassName() == "Number" || o.ClassName() == "String")
}

// jsonGap is JSON.stringify's indentation for its space argument.
func jsonGap(space goja.Value) string {
	if o, ok := space.(*goja.Object); ok {
		switch o.ClassName() {
		case "Number":
			space = o.ToNumber()
		case "String":
			space = o.ToString()
		}
	}
	switch {
	case space == nil:
		return ""
	case goja.IsNumber(space):
		n := min(space.ToFloat(), 10)
		if n >= 1 {
			return strings.Repeat(" ", int(n))
		}
	case goja.IsString(space):
		s := space.(goja.String)
		if s.Length() > 10 {
			s = s.Substring(0, 10)
		}
		return s.String()
	}
	return ""
}

// stringBudget is how long a string one native step may build: the
// call's memory limit less the growth the last forced GC confirmed live.
// A JSON text is held twice at most (builder and JavaScript string).
func (r *realm) stringBudget() int {
	limit := uint64(r.c.lim.MemoryBytes)
	live := r.c.mem.live.Load()
	if live >= limit {
		return 0
	}
	return int(min((limit-live)/2, math.MaxInt32))
}

// jsonDepth returns how deeply arrays and objects nest in JSON text. It
// reads text that is not JSON too, without failing: the parser that comes
// after reports the syntax error.
func jsonDepth(text string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		}
	}
	return deepest
}

// depthError is the error for JSON nested deeper than maxJSONDepth.
func depthError(what string, depth int) *errdefs.Error {
	return errdefs.LimitError(errdefs.LimitDepth, "js: %s nests %d levels deep, over the limit of %d", what, depth, maxJSONDepth)
}

// installJSON replaces the realm's JSON.stringify with the executor's
// encoder and guards JSON.parse against nesting that would recurse
// without bound in the engine's parser.
func (r *realm) installJSON() error {
	rt := r.rt
	obj := rt.Get("JSON").ToObject(rt)
	orig, ok := goja.AssertFunction(obj.Get("parse"))
	if !ok {
		return fmt.Errorf("JSON.parse is not a function")
	}
	isArray, ok := goja.AssertFunction(rt.Get("Array").ToObject(rt).Get("isArray"))
	if !ok {
		return fmt.Errorf("Array.isArray is not a function")
	}
	r.arrayIsArray = isArray
	parse := func(fc goja.FunctionCall) goja.Value {
		text := fc.Argument(0).String()
		if d := jsonDepth(text); d > maxJSONDepth {
			r.c.stop(depthError("JSON.parse input", d))
			return goja.Undefined()
		}
		v, err := orig(fc.This, rt.ToValue(text), fc.Argument(1))
		if err != nil {
			panic(err)
		}
		return v
	}
	for _, f := range []struct {
		name string
		fn   func(goja.FunctionCall) goja.Value
	}{{"parse", parse}, {"stringify", r.stringify}} {
		if err := obj.DefineDataProperty(f.name, rt.ToValue(f.fn), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return err
		}
	}
	return nil
}

// isArray is Array.isArray, the original: it sees through proxies.
func (r *realm) isArray(o *goja.Object) bool {
	if o.ClassName() == "Array" {
		return true
	}
	v, err := r.arrayIsArray(goja.Undefined(), o)
	if err != nil {
		panic(err)
	}
	return v.ToBoolean()
}
