// @nocheck
// Every route to the Function constructors compiles nothing.
const tryit = (f) => { try { return 'ESCAPED: ' + String(f()); } catch (e) { return e.name + ': ' + e.message; } };
return {
  Function: tryit(() => Function('return 1')()),
  newFunction: tryit(() => new Function('a', 'return a')(1)),
  taggedTemplate: tryit(() => Function`return 1`()),
  viaFunctionLiteral: tryit(() => (function () {}).constructor('return 1')()),
  viaArrow: tryit(() => (() => 1).constructor('return 1')()),
  viaAsyncFunction: tryit(() => (async function () {}).constructor('return 1')),
  viaAsyncArrow: tryit(() => Object.getPrototypeOf(async () => {}).constructor('return 1')),
  viaGenerator: tryit(() => (function* () {}).constructor('yield 1')),
  viaClass: tryit(() => (class {}).constructor('return 1')),
  viaBuiltin: tryit(() => [].map.constructor('return 1')),
  viaUtils: tryit(() => utils.hash.constructor('return 1')),
  viaConsole: tryit(() => console.log.constructor('return 1')),
  reflectConstruct: tryit(() => Reflect.construct(Function, ['return 1'])),
  reflectApply: tryit(() => Reflect.apply(Function, null, ['return 1'])),
  apply: tryit(() => Function.apply(null, ['return 1'])),
  bound: tryit(() => new (Function.bind(null, 'return 1'))()),
  descriptor: tryit(() => Object.getOwnPropertyDescriptor(Function.prototype, 'constructor').value('return 1')),
  constructorChain: tryit(() => ({}).constructor.constructor('return this')()),
  instanceofStillWorks: (() => 1) instanceof Function,
};
