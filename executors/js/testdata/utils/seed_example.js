// @args {"csv": "product,price,qty\nwidget,2.50,4\ngadget,10,1\ndoohickey,n/a,3\n", "numeric_column": "price"}
const records = utils.parseCsv(args.csv);
if (records.length === 0) return { error: 'No records found in CSV' };

const columns = Object.keys(records[0]);
const result = {
  rowCount: records.length,
  columns: columns,
  id: utils.isUuid(utils.uuid()),
  analyzedAt: typeof utils.now(),
};

if (args.numeric_column && columns.includes(args.numeric_column)) {
  const values = records
    .map(r => parseFloat(r[args.numeric_column]))
    .filter(v => !isNaN(v));
  result.stats = {
    count: values.length,
    sum: utils.sum(values),
    avg: utils.round(utils.avg(values), 2),
    min: Math.min(...values),
    max: Math.max(...values),
  };
}

return result;
