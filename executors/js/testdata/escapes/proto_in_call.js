// @nocheck
// Prototype pollution works inside the call that does it (another call
// never sees it; see TestFreshRealm), and does not reach the executor's
// own helpers.
Object.prototype.polluted = 'yes';
Array.prototype.map = function () { return ['hijacked']; };
JSON.parse = () => ({ hijacked: true });
return {
  seen: ({}).polluted,
  chunk: utils.chunk([1, 2, 3], 2),
  csv: utils.parseCsv('a\n1'),
  hash: utils.hash('x').length,
};
