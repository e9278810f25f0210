package js

// utils.callTool and utils.listTools: a tool's code calling other tools
// through the daemon (executors.Host).
//
//	const r = await utils.callTool("word_frequency", { text: "a b a" })
//	const names = utils.listTools().map(t => t.name)
//
//   - callTool(name, args = {}) returns a promise. It resolves with the
//     called tool's result (parsed JSON). It rejects with an Error whose
//     message is "<code>: <message>" and whose code property is the stable
//     code when the daemon refused or stopped the nested call
//     (tool_not_found, policy_denied, limit_exceeded for depth,
//     approval_required, ...), or "tool_error" when the tool ran and
//     failed on its own terms; callId names the nested call in the audit
//     log when it ran.
//   - listTools() returns [{name, description, parameters}] for the tools
//     this call's caller may call, synchronously.
//   - The daemon runs each nested call as this call's caller (worker,
//     token, profiles, approvals, rate limits), bounds how deep calls nest
//     and refuses cycles: nothing in the request names who asks.
//   - Each callTool counts against the call's request limit
//     (Limits.Requests, DefaultRequests when zero), as fetch does: going
//     past it ends the call with limit_exceeded (limit "requests").
//   - The VM waits for each nested call (they run one after another); the
//     call's time limit covers them: when the call is stopped, the nested
//     call in flight is cancelled with it.
//   - A call the daemon gave no Host (the executor run on its own, or a
//     kind that cannot call back) throws TypeError from both.

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/dop251/goja"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// toolErrorCode is the code of a nested tool that ran and failed.
const toolErrorCode = "tool_error"

func (r *realm) host(fn string) executors.Host {
	h := r.c.req.Host
	if h == nil {
		r.throw("TypeError", "utils.%s: this call cannot call other tools", fn)
	}
	return h
}

func (r *realm) utilCallTool(fc goja.FunctionCall) goja.Value {
	h := r.host("callTool")
	name := r.text(fc, 0, "callTool")
	args := "{}"
	if a := fc.Argument(1); !goja.IsUndefined(a) && !goja.IsNull(a) {
		args = r.encodeJSON(a)
	}
	max := r.c.lim.Requests
	if max <= 0 {
		max = DefaultRequests
	}
	r.nestedCalls++
	if r.nestedCalls > max {
		r.c.stop(errdefs.LimitError(errdefs.LimitRequests, "js: utils.callTool called more than %d times, the call's request limit", max))
		return goja.Undefined() // the call is stopped at the next instruction
	}
	p, resolve, reject := r.rt.NewPromise()
	res, err := h.CallTool(r.ctx, name, json.RawMessage(args))
	if r.c.stopped.Load() {
		return r.rt.ToValue(p) // stopped while it waited: settled by nothing
	}
	switch {
	case err != nil:
		must(reject(r.toolError(errorCode(err), errorMessage(err), "")))
	case res.IsError:
		must(reject(r.toolError(toolErrorCode, "tool "+name+" failed: "+res.Error, res.CallID)))
	default:
		v, ok := r.parseResult(res.Value)
		if !ok {
			return goja.Undefined() // stopped: the call ends at the next instruction
		}
		must(resolve(v))
	}
	return r.rt.ToValue(p)
}

func (r *realm) utilListTools(goja.FunctionCall) goja.Value {
	h := r.host("listTools")
	tools, err := h.ListTools(r.ctx)
	if err != nil {
		if r.c.stopped.Load() {
			return goja.Undefined()
		}
		panic(r.toolError(errorCode(err), errorMessage(err), ""))
	}
	if tools == nil {
		tools = []executors.HostTool{}
	}
	b, err := json.Marshal(tools)
	if err != nil {
		r.throw("Error", "utils.listTools: %v", err)
	}
	v, _ := r.parseResult(b)
	return v
}

// parseResult parses JSON the daemon sent, null when empty. JSON nested
// past maxJSONDepth stops the call, as JSON.parse does (ok is false).
// It runs inside a native function: exceptions propagate as panics.
func (r *realm) parseResult(raw json.RawMessage) (v goja.Value, ok bool) {
	text := strings.TrimSpace(string(raw))
	if text == "" {
		return goja.Null(), true
	}
	if d := jsonDepth(text); d > maxJSONDepth {
		r.c.stop(depthError("a nested call's result", d))
		return goja.Undefined(), false
	}
	v, err := r.jsonParse(goja.Undefined(), r.rt.ToValue(text))
	if err != nil {
		panic(err)
	}
	return v, true
}

// toolError is the Error a nested call rejects with: message
// "<code>: <message>", and code and (when it ran) callId properties.
func (r *realm) toolError(code, msg, callID string) goja.Value {
	text := code + ": " + msg
	var e *goja.Object
	if ctor, ok := r.rt.Get("Error").(*goja.Object); ok {
		if v, err := r.rt.New(ctor, r.rt.ToValue(text)); err == nil {
			e = v
		}
	}
	if e == nil {
		e = r.rt.NewTypeError("%s", text)
	}
	_ = e.Set("code", code)
	if callID != "" {
		_ = e.Set("callId", callID)
	}
	return e
}

// errorCode is err's stable code, internal when it has none.
func errorCode(err error) string { return string(errdefs.CodeOf(err)) }

// errorMessage is err's text without a wrapping code.
func errorMessage(err error) string {
	var e *errdefs.Error
	if errors.As(err, &e) && e.Err != nil {
		return e.Err.Error()
	}
	return err.Error()
}
