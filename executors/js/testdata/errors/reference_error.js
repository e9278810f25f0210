// A typo in a variable name.
const total = 1;
return totl + 1;
