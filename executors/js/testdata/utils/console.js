console.log('plain', 1, true, null, undefined, 2.5);
console.info({ a: 1, b: [1, 2] });
console.warn([1, 'two', { three: 3 }]);
console.error(new TypeError('bad thing'));
console.debug(function named() {}, () => {}, Symbol('s'), 10n);
const cyclic = {}; cyclic.self = cyclic;
console.log('cyclic', cyclic);
console.log();
return 'logged';
