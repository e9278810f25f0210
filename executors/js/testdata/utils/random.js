const ids = Array.from({ length: 50 }, () => utils.uuid());
const pw = utils.generatePassword();
const pw32 = utils.generatePassword(32);
const ints = Array.from({ length: 500 }, () => utils.randomInt(1, 6));
const defaults = Array.from({ length: 200 }, () => utils.randomInt());
const tryit = (f) => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
return {
  uuidsValid: ids.every(utils.isUuid),
  uuidsV4: ids.every((id) => id[14] === '4' && '89ab'.includes(id[19])),
  uuidsUnique: new Set(ids).size === ids.length,
  passwordLengths: [pw.length, pw32.length, utils.generatePassword(4).length],
  passwordClasses: [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].every((re) => re.test(pw)),
  passwordsDiffer: pw !== utils.generatePassword(),
  passwordTooShort: tryit(() => utils.generatePassword(2)),
  passwordTooLong: tryit(() => utils.generatePassword(5000)),
  intsInRange: ints.every((n) => Number.isInteger(n) && n >= 1 && n <= 6),
  intsCoverRange: new Set(ints).size === 6,
  defaultRange: defaults.every((n) => n >= 0 && n <= 100),
  swappedBounds: utils.randomInt(5, 5) === 5 && [utils.randomInt(9, 7)].every((n) => n >= 7 && n <= 9),
  shuffleKeepsItems: utils.shuffle([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).sort((a, b) => a - b).join(),
  shuffleCopies: (() => { const a = [1, 2, 3]; utils.shuffle(a); return a.join(); })(),
  sampleSizes: [utils.sample([1, 2, 3], 2).length, utils.sample([7]).length, utils.sample([1, 2], 5).length, utils.sample([1, 2], 0).length],
  sampleFromInput: utils.sample([1, 2, 3], 3).every((x) => [1, 2, 3].includes(x)),
};
