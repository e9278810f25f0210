throw { code: 42, reason: 'nope' };
