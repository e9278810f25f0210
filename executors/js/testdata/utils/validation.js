return {
  isEmail: ['a@b.co', 'first.last+tag@example.org', 'no-at.example', 'a@b', 'a b@c.d', '@b.co', 'a@b.co.', 42].map(utils.isEmail),
  isUrl: ['https://example.com', 'http://localhost:8080/x?y=1#z', 'ftp://files.example.com', 'example.com', '/relative/path', 'mailto:a@b.co', 'https://exa mple.com', '', null].map(utils.isUrl),
  isJson: ['{"a":1}', '[1,2]', '"s"', '42', 'null', '{a:1}', '', 'undefined', 17].map(utils.isJson),
  isUuid: ['123e4567-e89b-12d3-a456-426614174000', '123E4567-E89B-12D3-A456-426614174000', '123e4567e89b12d3a456426614174000', 'not-a-uuid', 7].map(utils.isUuid),
};
