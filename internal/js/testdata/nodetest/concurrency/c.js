const test = require('node:test');
const order = [];
test('concurrent parent', { concurrency: true }, async (t) => {
  const slow = t.test('slow', async () => { await new Promise((r) => setTimeout(r, 30)); order.push('slow'); });
  const fast = t.test('fast', async () => { await new Promise((r) => setTimeout(r, 1)); order.push('fast'); });
  await Promise.all([slow, fast]);
  t.assert.deepStrictEqual(order, ['fast', 'slow']);
});
test('sequential parent', async (t) => {
  const seq = [];
  const a = t.test('a', async () => { await new Promise((r) => setTimeout(r, 20)); seq.push('a'); });
  const b = t.test('b', () => { seq.push('b'); });
  await Promise.all([a, b]);
  t.assert.deepStrictEqual(seq, ['a', 'b']);
});
test('signal aborts after the test', async (t) => {
  const s = t.signal;
  await t.test('inner', () => {});
  setTimeout(() => { if (!s.aborted) process.exitCode = 9; }, 1);
});
