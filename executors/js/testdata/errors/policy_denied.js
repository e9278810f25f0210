const cmd = 'ls';
return require('child_process').execSync(cmd);
