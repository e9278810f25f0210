let args = 1;
return args;
