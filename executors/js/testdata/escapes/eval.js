// @nocheck
const tryit = (f) => { try { return 'ESCAPED: ' + String(f()); } catch (e) { return e.name + ': ' + e.message; } };
return {
  typeofEval: typeof eval,
  inGlobal: 'eval' in globalThis,
  direct: tryit(() => eval('1 + 1')),
  indirect: tryit(() => (0, eval)('1 + 1')),
  viaGlobal: tryit(() => globalThis['ev' + 'al']('1 + 1')),
  viaThis: tryit(() => (function () { return this; })().eval('1 + 1')),
};
