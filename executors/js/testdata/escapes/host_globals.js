// @nocheck
// Nothing of the host is in scope, and the global object holds only
// ECMAScript built-ins.
const names = ['require', 'process', 'module', 'exports', '__dirname', '__filename', 'global', 'Buffer',
  'fetch', 'XMLHttpRequest', 'WebSocket', 'setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask',
  'WebAssembly', 'SharedArrayBuffer', 'Atomics', 'Deno', 'Bun', 'importScripts', 'eval'];
const typeofs = {};
for (const n of names) typeofs[n] = typeof globalThis[n];
return {
  typeofs,
  bareProcess: typeof process,
  bareRequire: typeof require,
  globals: Object.getOwnPropertyNames(globalThis).sort(),
};
