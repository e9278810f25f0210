return function () {};
