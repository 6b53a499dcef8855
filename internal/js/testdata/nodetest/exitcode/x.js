const test = require('node:test');
process.exitCode = 7;
test('passes', () => {});
