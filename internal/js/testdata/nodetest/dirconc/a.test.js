const test = require('node:test');
test('a passes', () => {});
console.log('output of a');
