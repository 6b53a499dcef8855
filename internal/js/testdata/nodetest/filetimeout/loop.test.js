// A file stuck in a synchronous loop is ended by the run's timeout and
// reported as timed out (cancelled); the other files run on.
const test = require('node:test');
test('quick', () => {});
while (true) {}
