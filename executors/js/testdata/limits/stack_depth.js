// Deep but bounded recursion is fine.
function depth(n) { return n === 0 ? 0 : 1 + depth(n - 1); }
return depth(5000);
