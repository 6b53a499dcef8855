const test = require('node:test');
test('leaves an interval running', () => { setInterval(() => {}, 1000); });
test('fails', () => { throw new Error('x'); });
