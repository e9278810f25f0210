// @output 100
for (let i = 0; i < 10; i++) console.log('line ' + i + ' ' + '.'.repeat(10));
return 'ok';
