const o = { name: 'loop' };
o.self = o;
return o;
