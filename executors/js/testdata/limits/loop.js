// @timeout 100ms
while (true) {}
