// @output 100
return 'x'.repeat(200);
