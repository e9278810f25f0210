// @timeout 100ms
// A stopped call cannot catch its own interruption.
try {
  while (true) {}
} catch (e) {
  return 'caught';
} finally {
  while (true) {}
}
