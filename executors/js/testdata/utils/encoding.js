const tryit = (f) => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
return {
  base64: utils.base64Encode('héllo wörld'),
  base64RoundTrip: utils.base64Decode(utils.base64Encode('héllo wörld ✓')),
  base64Unpadded: utils.base64Decode('aGk'),
  base64Url: utils.base64Decode('-_8'),
  base64Spaces: utils.base64Decode('aGVs\nbG8='),
  base64Bad: tryit(() => utils.base64Decode('***')),
  base64Missing: tryit(() => utils.base64Encode()),
  url: utils.urlEncode('a b&c=d/é?'),
  urlRoundTrip: utils.urlDecode(utils.urlEncode('a b&c=d/é?')),
  urlBad: tryit(() => utils.urlDecode('%E0%A4%A')),
  hex: utils.hexEncode('hi ✓'),
  hexRoundTrip: utils.hexDecode(utils.hexEncode('hi ✓')),
  hexPrefixed: utils.hexDecode('0x6869'),
  hexBad: tryit(() => utils.hexDecode('zz')),
  hexOdd: tryit(() => utils.hexDecode('686')),
};
