// @timeout 100ms
return new Promise(() => {});
