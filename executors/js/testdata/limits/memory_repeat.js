// @memory 64MiB
// One huge allocation is refused before it is made.
return 'x'.repeat(2 ** 30).length;
