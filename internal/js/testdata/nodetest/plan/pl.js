const test = require('node:test');
test('plan met', (t) => { t.plan(2); t.assert.ok(true); t.assert.strictEqual(1, 1); });
test('plan short', (t) => { t.plan(3); t.assert.ok(true); });
test('plan counts subtests', async (t) => {
  t.plan(2);
  t.assert.deepStrictEqual([1], [1]);
  await t.test('sub', () => {});
});
test('context fields', (t) => {
  t.assert.strictEqual(t.name, 'context fields');
  t.assert.strictEqual(t.signal.aborted, false);
});
