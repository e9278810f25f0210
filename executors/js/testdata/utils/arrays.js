const tryit = (f) => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
const people = [{ name: 'a', team: 'red' }, { name: 'b', team: 'blue' }, { name: 'c', team: 'red' }, { name: 'd' }];
return {
  unique: utils.unique([1, '1', 1, NaN, NaN, 'a', 'a', 0, -0]),
  uniqueBad: tryit(() => utils.unique('abc')),
  chunk: [utils.chunk([1, 2, 3, 4, 5], 2), utils.chunk([], 3), utils.chunk([1, 2], 5)],
  chunkBad: tryit(() => utils.chunk([1], 0)),
  groupByKey: utils.groupBy(people, 'team'),
  groupByFn: utils.groupBy([1, 2, 3, 4, 5], (n) => (n % 2 ? 'odd' : 'even')),
};
