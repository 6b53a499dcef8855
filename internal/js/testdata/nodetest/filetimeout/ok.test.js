const test = require('node:test');
test('fine', () => {});
