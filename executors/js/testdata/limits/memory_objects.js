// @memory 64MiB
// @timeout 1m
const a = [];
while (true) a.push({ i: a.length, s: 'k' + a.length, n: [a.length] });
