// @nocheck
// Keys named __proto__ in data are data: helpers that build objects from
// input define their keys instead of assigning them.
const row = utils.parseCsv('__proto__,x\npolluted,1')[0];
const groups = utils.groupBy([{ k: '__proto__' }], 'k');
const flat = utils.flatten(JSON.parse('{"__proto__": {"polluted": 1}}'));
return {
  csvKeys: Object.keys(row),
  csvPrototype: Object.getPrototypeOf(row) === Object.prototype,
  groupKeys: Object.keys(groups),
  groupPrototype: Object.getPrototypeOf(groups) === Object.prototype,
  flatKeys: Object.keys(flat),
  notPolluted: ({}).polluted === undefined,
};
