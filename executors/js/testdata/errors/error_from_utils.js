// @args {"rows": [1, 2, 3]}
const rows = args.rows;
return utils.chunk(rows, 0);
