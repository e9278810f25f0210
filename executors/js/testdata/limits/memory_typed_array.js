// @memory 64MiB
// @timeout 1m
const b = new Float64Array(32 << 20);
b.fill(1);
return b.length;
