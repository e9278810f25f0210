const a = 1;
const b = {
  c: 2,,
};
return b;
