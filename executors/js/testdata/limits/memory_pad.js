// @memory 64MiB
return ''.padStart(2 ** 29, 'ab').length;
