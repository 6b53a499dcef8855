const test = require('node:test');
test('to a file', () => {});
test('fails too', () => { throw new Error('x'); });
