return {
  fn: () => 1,
  undef: undefined,
  nan: NaN,
  inf: Infinity,
  date: new Date(0),
  map: new Map([[1, 2]]),
  nested: [undefined, () => 1, 'ok'],
  unicode: 'héllo ✓ \ud83d\ude00',
};
