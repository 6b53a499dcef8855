const test = require('node:test');
test('a', () => {});
test('b', async (t) => { await t.test('c', () => { throw new Error('x'); }); });
