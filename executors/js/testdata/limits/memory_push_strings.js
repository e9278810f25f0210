// @memory 64MiB
// @timeout 1m
let a = [];
while (true) a.push('x'.repeat(1 << 20) + a.length);
