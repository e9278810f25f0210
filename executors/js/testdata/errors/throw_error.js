const a = 1;
if (a === 1) {
  throw new Error('boom');
}
return a;
