return { args, keys: Object.keys(args) };
