// A rejection nobody waits for does not fail the call.
Promise.reject(new Error('ignored'));
return 'ok';
