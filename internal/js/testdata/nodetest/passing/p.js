const test = require('node:test');
const assert = require('node:assert');
test('adds', () => { assert.strictEqual(1 + 1, 2); });
test('async adds', async () => { assert.strictEqual(await Promise.resolve(3), 3); });
test('with subtests', async (t) => {
  await t.test('first', () => {});
  await t.test('second', (t) => { t.diagnostic('a note'); });
});
test('name # with \\ escapes', () => {});
