return 1;
}); (function () {
