// @args {"text": "hello"}
return {
  default: utils.hash(args.text),
  sha256: utils.hash(args.text, 'sha256'),
  sha1: utils.hash(args.text, 'sha1'),
  sha384: utils.hash('', 'sha384'),
  sha512: utils.hash(args.text, 'SHA-512'),
  md5: utils.hash(args.text, 'md5'),
  unicode: utils.hash('héllo ✓'),
  number: utils.hash(42),
};
