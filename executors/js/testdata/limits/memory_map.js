// @memory 64MiB
// @timeout 1m
const m = new Map();
let i = 0;
while (true) m.set(i, 'v' + i++);
