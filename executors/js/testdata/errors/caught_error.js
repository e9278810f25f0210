try {
  JSON.parse('{bad');
} catch (e) {
  return { caught: e.name };
}
