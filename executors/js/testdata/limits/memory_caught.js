// @memory 64MiB
// @timeout 1m
// A stopped call cannot catch its own interruption.
const a = [];
try {
  while (true) a.push('c'.repeat(1 << 16) + a.length);
} catch (e) {
  a.length = 0;
  return 'caught';
}
