const tryit = (f) => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
return {
  clamp: [utils.clamp(5, 0, 10), utils.clamp(-5, 0, 10), utils.clamp(50, 0, 10), utils.clamp('7', 0, 10)],
  clampBad: tryit(() => utils.clamp(1, 10, 0)),
  round: [utils.round(1.005, 2), utils.round(2.5), utils.round(-2.5), utils.round(-1.005, 2), utils.round(1234.5678, -2), utils.round(0.1 + 0.2, 10), utils.round(1e-7, 8), utils.round(-0.4)],
  roundBad: tryit(() => utils.round('x')),
  sum: [utils.sum([1, 2, 3.5]), utils.sum([]), utils.sum(['1', 2])],
  avg: [utils.avg([1, 2, 3, 4]), utils.avg([])],
  sumBad: tryit(() => utils.sum('123')),
};
