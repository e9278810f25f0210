// @memory 64MiB
return new Array(2 ** 30).join('x').length;
