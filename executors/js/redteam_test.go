package js

import (
	"testing"

	"github.com/toolcage/toolcage/executors"
)

// redTeamCodeGeneration are more routes to the Function constructor (red
// team, branch redteam); TestNoCodeGeneration runs them with its own.
var redTeamCodeGeneration = []string{
	"Object.getPrototypeOf(function*(){}).constructor('yield 1')",
	"new (class extends Function {})('return 1')",
	"Reflect.construct(Function, ['return 1'], class {})",
	"({}).constructor.constructor('return 1')",
	"({}).__proto__.constructor.constructor('return 1')",
	"''.constructor.constructor('return 1')",
	"(1).constructor.constructor('return 1')",
	"Symbol.constructor.constructor('return 1')",
	"JSON.parse.constructor('return 1')",
	"Math.max.constructor('return 1')",
	"Promise.resolve.constructor('return 1')",
	"utils.callTool.constructor('return 1')",
	"new Proxy(Function, {}).call(null, 'return 1')",
	"new (new Proxy(Function, {}))('return 1')",
	"Function.prototype.constructor.call(null, 'return 1')",
	"Function.prototype.call.call(Function, null, 'return 1')",
	"Function.prototype.bind.call(Function, null, 'return 1')()",
	"Array.from(['return 1'], Function)[0]",
	"['return 1'].map(Function)[0]",
	"Object.getOwnPropertyDescriptor(Object.getPrototypeOf(() => 1), 'constructor').value('return 1')",
	"Reflect.get(Function.prototype, 'constructor')('return 1')",
	"Object.values(Object.getOwnPropertyDescriptors(Function.prototype)).find(d => d.value === Function).value('return 1')",
}

// TestRedTeamNoHostRoutes (branch redteam): routes to code or to the host
// that must not exist at all, run with the static check off, throw.
func TestRedTeamNoHostRoutes(t *testing.T) {

	for _, code := range []string{
		"return setTimeout('1', 0)",
		"return setInterval('1', 0)",
		"return new ShadowRealm().evaluate('1')",
		"return WebAssembly.compile(new Uint8Array([0]))",
		"return globalThis['e' + 'val']('1')",
		"return this['ev' + 'al']('1')",
		"return Reflect.get(globalThis, 'eval')('1')",
		"return require('fs')",
		"return globalThis.require('fs')",
		"return process.env",
		"return globalThis.process.env",
		"return (function(){ return this })().process.env",
		"return Deno.env.toObject()",
		"return Bun.env",
		"return module.require('fs')",
		"return __non_webpack_require__('fs')",
	} {
		t.Run(code, func(t *testing.T) {
			res, err := run(t, false, code, "", executors.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError {
				t.Errorf("got %s, want an error", res.Value)
			}
		})
	}
}

// TestRedTeamHostNames: whatever a script enumerates, the realm holds no
// host object (process, require, a module loader, the filesystem).
func TestRedTeamHostNames(t *testing.T) {
	code := `
const seen = new Set();
let o = globalThis;
while (o) { for (const k of Reflect.ownKeys(o)) seen.add(String(k)); o = Object.getPrototypeOf(o); }
return ["process", "require", "module", "exports", "Deno", "Bun", "global", "__dirname", "Buffer", "os", "fs", "child_process", "XMLHttpRequest", "WebSocket", "importScripts", "ShadowRealm", "WebAssembly", "setTimeout"].filter(n => seen.has(n));`
	res, err := run(t, false, code, "", executors.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || string(res.Value) != "[]" {
		t.Errorf("host names reachable: %s %s", res.Value, res.Error)
	}
}
