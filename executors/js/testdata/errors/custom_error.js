class ValidationError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ValidationError';
  }
}
function validate(x) {
  if (typeof x !== 'number') throw new ValidationError('expected a number, got ' + typeof x);
  return x;
}
return validate(args.x);
