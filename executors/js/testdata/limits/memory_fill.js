// @memory 64MiB
return new Array(2 ** 30).fill(0).length;
