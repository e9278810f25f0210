// @nocheck
// The realm's global object is reachable, but it is the realm's own.
const sloppyThis = (function () { return this; })();
globalThis.leaked = 1;
return {
  sameGlobal: sloppyThis === globalThis,
  toStringTag: Object.prototype.toString.call(globalThis),
  ownKeysAdded: Object.keys(globalThis),
};
