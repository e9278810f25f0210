// @args {"a": 
return args;
