throw 'something went wrong';
