// @args {"csv": "name, age, city\nAda, 36, London\n\"Turing, Alan\",41,\"Wilmslow\"\nGrace,85\n"}
const tryit = (f) => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
const nested = { a: { b: { c: 1 }, d: [1, { e: 2 }] }, f: 'x', g: {}, h: null };
return {
  parseJson: utils.parseJson('{"a":[1,2,{"b":null}]}'),
  parseJsonBad: tryit(() => utils.parseJson('{bad')),
  toJsonDefault: utils.toJson({ a: 1, b: [1, 2] }),
  toJsonCompact: utils.toJson({ a: 1, b: [1, 2] }, 0),
  parseCsv: utils.parseCsv(args.csv),
  parseCsvSemicolon: utils.parseCsv('a;b\n1;2', ';'),
  parseCsvEmpty: utils.parseCsv(''),
  parseCsvHeaderOnly: utils.parseCsv('a,b\n'),
  parseCsvBadDelimiter: tryit(() => utils.parseCsv('a,b', ',,')),
  flatten: utils.flatten(nested),
  flattenPrefix: utils.flatten({ a: { b: 1 } }, 'root'),
  flattenCircular: tryit(() => { const o = { a: {} }; o.a.self = o; return utils.flatten(o); }),
  getPath: [utils.getPath(nested, 'a.b.c'), utils.getPath(nested, 'a.d[1].e'), utils.getPath(nested, "a['d'][0]"), utils.getPath(nested, 'a.x.y'), utils.getPath(nested, 'a.d.length')],
  getPathOwnOnly: [utils.getPath({}, 'constructor'), utils.getPath({}, 'toString'), utils.getPath(null, 'a')],
};
