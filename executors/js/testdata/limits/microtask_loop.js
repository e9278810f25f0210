// @timeout 100ms
// Each job queues the next: the job queue never drains.
const spin = () => { Promise.resolve().then(spin); };
spin();
return 'never';
