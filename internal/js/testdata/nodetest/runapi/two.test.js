const test = require('node:test');
test('two fails', () => { throw new Error('two'); });
test('two ok', () => {});
