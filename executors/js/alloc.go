package js

import (
	"fmt"

	"github.com/dop251/goja"
)

type allocCtor struct {
	name string
	size int64
}

// allocCtors are the constructors that can allocate an arbitrary amount in
// one native step, with the bytes each element costs. new
// ArrayBuffer(2 ** 31) is one make([]byte) that the heap watchdog sees
// only after it happened, and the OS may not even back its pages: the
// size is checked against the memory limit before the engine allocates.
var allocCtors = []allocCtor{
	{"ArrayBuffer", 1},
	{"Int8Array", 1}, {"Uint8Array", 1}, {"Uint8ClampedArray", 1},
	{"Int16Array", 2}, {"Uint16Array", 2},
	{"Int32Array", 4}, {"Uint32Array", 4}, {"Float32Array", 4},
	{"Float64Array", 8}, {"BigInt64Array", 8}, {"BigUint64Array", 8},
	{"Array", valueBytes},
}

// installAllocGuards replaces each constructor in allocCtors with a native
// constructor that checks the size first and then constructs through the
// original. The replacement has the original's prototype object, statics
// and [[Prototype]], and is the prototype's constructor property, so
// instanceof and identity checks hold, and new X(n),
// new (x.constructor)(n), subclasses (super(n) constructs through it),
// X.from and X.of (which construct through their this) and species
// constructors all pass the check. (A Proxy would have been simpler, but
// goja's instanceof refuses a proxy as its right operand.)
func (r *realm) installAllocGuards() error {
	return r.guardCtors(allocCtors)
}

// guardCtors replaces each of ctors with its checking constructor.
func (r *realm) guardCtors(ctors []allocCtor) error {
	rt := r.rt
	species := rt.ToValue(func(fc goja.FunctionCall) goja.Value { return fc.This })
	for _, ac := range ctors {
		orig, ok := rt.Get(ac.name).(*goja.Object)
		if !ok {
			return fmt.Errorf("%s is not an object", ac.name)
		}
		what, size, isArray := "new "+ac.name, ac.size, ac.name == "Array"
		wrapper := rt.ToValue(func(cc goja.ConstructorCall) *goja.Object {
			n := r.allocElements(cc.Arguments, isArray)
			if n > 0 && !r.c.reserve(int64(min(n, 1<<53)*float64(size)), true, what) {
				// The call is stopped; the exception only unwinds to
				// the interrupt.
				panic(rt.NewTypeError("%s: over the memory limit", what))
			}
			// goja gives no NewTarget both for new X() and for a plain
			// call X(), so a typed array called without new is
			// constructed rather than refused: a harmless difference.
			v, err := rt.New(orig, cc.Arguments...)
			if err != nil {
				panic(err)
			}
			if cc.NewTarget != nil {
				// A subclass: the instance takes its prototype, as
				// Reflect.construct(orig, args, NewTarget) would give.
				if p, ok := cc.NewTarget.Get("prototype").(*goja.Object); ok {
					if err := v.SetPrototype(p); err != nil {
						panic(err)
					}
				}
			}
			return v
		}).(*goja.Object)
		if err := copyStatics(rt, orig, wrapper, species); err != nil {
			return fmt.Errorf("%s: %w", ac.name, err)
		}
		if err := rt.Set(ac.name, wrapper); err != nil {
			return err
		}
		proto := orig.Get("prototype").ToObject(rt)
		if err := proto.DefineDataProperty("constructor", wrapper, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return err
		}
	}
	return nil
}

// copyStatics makes wrapper look like orig: its prototype property, name,
// length, static methods, Symbol.species and [[Prototype]].
func copyStatics(rt *goja.Runtime, orig, wrapper *goja.Object, species goja.Value) error {
	if err := wrapper.SetPrototype(orig.Prototype()); err != nil {
		return err
	}
	for _, k := range orig.GetOwnPropertyNames() {
		writable, configurable := goja.FLAG_TRUE, goja.FLAG_TRUE
		switch k {
		case "prototype":
			writable, configurable = goja.FLAG_FALSE, goja.FLAG_FALSE
		case "name", "length":
			writable = goja.FLAG_FALSE
		case "BYTES_PER_ELEMENT":
			writable, configurable = goja.FLAG_FALSE, goja.FLAG_FALSE
		}
		if err := wrapper.DefineDataProperty(k, orig.Get(k), writable, goja.FLAG_FALSE, configurable); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return wrapper.DefineAccessorPropertySymbol(goja.SymSpecies, species, nil, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// allocElements is how many elements a constructor call would allocate:
// a numeric length, or the length of an array-like source (a typed array
// copied from another array). Arrays are allocated by length only when
// called with one number; an ArrayBuffer given to a typed array is a view
// and allocates nothing.
func (r *realm) allocElements(args []goja.Value, isArray bool) float64 {
	if len(args) == 0 {
		return 0
	}
	if isArray && len(args) > 1 {
		return 0
	}
	switch a := args[0].(type) {
	case *goja.Object:
		if isArray || a.ExportType() == arrayBufferType {
			return 0
		}
		return max(r.lengthOf(a), 0)
	default:
		if goja.IsNumber(a) || !isArray && !goja.IsUndefined(a) && !goja.IsNull(a) {
			return max(number(a), 0)
		}
	}
	return 0
}
