// utils is a read-only object of functions: assignments and deletes are
// ignored (this code is not strict), and every listed key is a function.
utils.hash = null;
delete utils.uuid;
utils.extra = 1;
const keys = Object.keys(utils);
return {
  keys,
  allFunctions: keys.every((k) => typeof utils[k] === 'function'),
  stillThere: typeof utils.hash === 'function' && typeof utils.uuid === 'function',
  noExtra: utils.extra === undefined,
  notConfig: ['getApiKey', 'getServiceConfig', 'callTool', 'listTools'].map((k) => k in utils),
  console: Object.keys(console),
};
