const { test } = require('node:test');
test('c in test dir', async (t) => { await t.test('c sub', () => {}); });
