// @memory 64MiB
// @timeout 1m
let s = 'x';
while (true) s = s + s;
