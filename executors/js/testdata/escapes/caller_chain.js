// @nocheck
// Walking up the call stack finds nothing of the executor.
const tryit = (f) => { try { return String(f()); } catch (e) { return e.name + ': ' + e.message; } };
function f() { return f.caller; }
return {
  caller: tryit(() => f()),
  calleeCaller: tryit(function () { return arguments.callee.caller; }),
  stackNames: tryit(() => new Error('x').stack.split('\n').length > 0),
};
