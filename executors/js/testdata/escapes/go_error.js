// @nocheck
// goja's GoError built-in wraps nothing when made from JavaScript.
const e = new GoError('x');
return { name: e.name, message: e.message, value: e.value === undefined };
