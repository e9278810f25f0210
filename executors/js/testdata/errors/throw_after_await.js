await null;
const items = [1, 2, 3];
await Promise.all(items.map(async (x) => x * 2));
throw new RangeError('out of range: ' + items.length);
