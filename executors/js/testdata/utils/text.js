const tryit = (f) => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
const inputs = ['Hello World', 'fooBar baz_qux-quux', 'XMLHttpRequest v2Api', '  Crème Brûlée!  ', 'already_snake_case', 'ÉCOLE ñandú'];
return {
  slugify: inputs.map(utils.slugify),
  camelCase: inputs.map(utils.camelCase),
  snakeCase: inputs.map(utils.snakeCase),
  kebabCase: inputs.map(utils.kebabCase),
  titleCase: inputs.map(utils.titleCase),
  removeDiacritics: utils.removeDiacritics('Crème Brûlée, São Paulo, Zürich, Ångström, ñandú'),
  truncateDefault: utils.truncate('x'.repeat(150)).length,
  truncateShort: utils.truncate('short', 10),
  truncate: utils.truncate('The quick brown fox', 10),
  truncateSuffix: utils.truncate('The quick brown fox', 10, '…'),
  truncateTiny: utils.truncate('The quick brown fox', 2),
  countWords: [utils.countWords('  one two\tthree\nfour  '), utils.countWords(''), utils.countWords('   '), utils.countWords('single')],
  missing: tryit(() => utils.slugify()),
};
