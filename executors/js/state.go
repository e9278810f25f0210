package js

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/toolcage/toolcage/executors"
)

// The state helpers read and write the calling worker's state, which the
// daemon hands over whole with the call (JSCall.State) and writes back
// from the changes the call made (Result.StateChanges), checking the caps
// again. Calls of one worker that run at once each see the state as it
// was when they started; the last write of a key wins.
//
//   - getState(key): the value, or undefined when the key is not set;
//   - setState(key, value): sets a JSON value (RangeError past a cap);
//   - deleteState(key): true when the key was set;
//   - listStateKeys(prefix = ""): the keys starting with prefix, sorted.
//
// A call that came through no worker, or through one whose state toolset
// is off, has no state: the helpers throw.

// jsState is a call's view of its worker's state; VM goroutine only.
type jsState struct {
	lim     executors.JSState
	values  map[string]json.RawMessage
	changes []executors.StateChange
}

func newJSState(s *executors.JSState) *jsState {
	if s == nil {
		return nil
	}
	v := maps.Clone(s.Values)
	if v == nil {
		v = map[string]json.RawMessage{}
	}
	return &jsState{lim: *s, values: v}
}

// state returns the call's state or throws.
func (r *realm) state(fn string) *jsState {
	if r.c.state == nil {
		r.throw("Error", "utils.%s: this call has no state: state is kept per worker, for workers whose state toolset is on", fn)
	}
	return r.c.state
}

// stateKey reads and checks argument 0 as a key.
func (r *realm) stateKey(fc goja.FunctionCall, fn string, st *jsState) string {
	k := r.text(fc, 0, fn)
	switch {
	case k == "":
		r.throw("TypeError", "utils.%s: the key is empty", fn)
	case st.lim.MaxKeyBytes > 0 && len(k) > st.lim.MaxKeyBytes:
		r.throw("RangeError", "utils.%s: the key is %d bytes, over the %d-byte cap", fn, len(k), st.lim.MaxKeyBytes)
	case !utf8.ValidString(k) || strings.ContainsFunc(k, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		r.throw("TypeError", "utils.%s: the key holds a control character or is not UTF-8", fn)
	}
	return k
}

func (r *realm) utilGetState(fc goja.FunctionCall) goja.Value {
	st := r.state("getState")
	v, ok := st.values[r.stateKey(fc, "getState", st)]
	if !ok {
		return goja.Undefined()
	}
	out, err := r.jsonParse(goja.Undefined(), r.rt.ToValue(string(v)))
	if err != nil {
		panic(err)
	}
	return out
}

func (r *realm) utilSetState(fc goja.FunctionCall) goja.Value {
	st := r.state("setState")
	k := r.stateKey(fc, "setState", st)
	val := fc.Argument(1)
	if goja.IsUndefined(val) {
		r.throw("TypeError", "utils.setState: the value is undefined (null is a value; deleteState removes a key)")
	}
	text := r.encodeJSON(val)
	if st.lim.MaxValueBytes > 0 && len(text) > st.lim.MaxValueBytes {
		r.throw("RangeError", "utils.setState: the value is %d bytes of JSON, over the %d-byte cap", len(text), st.lim.MaxValueBytes)
	}
	if _, set := st.values[k]; !set && st.lim.MaxKeys > 0 && len(st.values) >= st.lim.MaxKeys {
		r.throw("RangeError", "utils.setState: the worker's state holds %d keys, its cap", len(st.values))
	}
	st.values[k] = json.RawMessage(text)
	st.changes = append(st.changes, executors.StateChange{Key: k, Value: json.RawMessage(text)})
	return goja.Undefined()
}

func (r *realm) utilDeleteState(fc goja.FunctionCall) goja.Value {
	st := r.state("deleteState")
	k := r.stateKey(fc, "deleteState", st)
	_, set := st.values[k]
	delete(st.values, k)
	st.changes = append(st.changes, executors.StateChange{Key: k})
	return r.rt.ToValue(set)
}

func (r *realm) utilListStateKeys(fc goja.FunctionCall) goja.Value {
	st := r.state("listStateKeys")
	prefix := optText(fc, 0, "")
	keys := []any{}
	for _, k := range slices.Sorted(maps.Keys(st.values)) {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	return r.rt.NewArray(keys...)
}
