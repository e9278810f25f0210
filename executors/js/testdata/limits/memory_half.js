// @memory 64MiB
// About half the limit, kept live while making garbage, is fine.
const keep = [];
for (let i = 0; i < 32; i++) keep.push('y'.repeat(1 << 20) + i);
let n = 0;
for (let i = 0; i < 20000; i++) n += ('z' + i).repeat(50).length;
return { kept: keep.length, churned: n };
