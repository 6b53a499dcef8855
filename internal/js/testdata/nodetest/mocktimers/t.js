const { test, mock } = require('node:test');
const assert = require('node:assert');
test('intervals and runAll', (t) => {
  t.mock.timers.enable({ apis: ['setInterval', 'setTimeout'] });
  const calls = [];
  const id = setInterval(() => calls.push('i'), 100);
  setTimeout(() => calls.push('t50'), 50);
  t.mock.timers.tick(250);
  assert.deepStrictEqual(calls, ['t50', 'i', 'i']);
  clearInterval(id);
  setTimeout(() => calls.push('late'), 1000);
  t.mock.timers.runAll();
  assert.deepStrictEqual(calls, ['t50', 'i', 'i', 'late']);
});
test('Date', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: 1000 });
  assert.strictEqual(Date.now(), 1000);
  t.mock.timers.tick(500);
  assert.strictEqual(Date.now(), 1500);
  assert.strictEqual(new Date().getTime(), 1500);
  t.mock.timers.setTime(5000);
  assert.strictEqual(Date.now(), 5000);
});
test('restored after the test', () => {
  assert.ok(Date.now() > 1e12);
});
test('setImmediate', (t) => {
  t.mock.timers.enable({ apis: ['setImmediate'] });
  let ran = false;
  setImmediate(() => { ran = true; });
  assert.strictEqual(ran, false);
  t.mock.timers.tick(0);
  assert.strictEqual(ran, true);
});
test('errors', (t) => {
  assert.throws(() => mock.timers.tick(1), { code: 'ERR_INVALID_STATE' });
  t.mock.timers.enable();
  assert.throws(() => t.mock.timers.enable(), { code: 'ERR_INVALID_STATE' });
});
test('mock.fn times and implementation', () => {
  const fn = mock.fn(() => 'orig', () => 'impl', { times: 2 });
  assert.deepStrictEqual([fn(), fn(), fn()], ['impl', 'impl', 'orig']);
  const ctor = mock.fn(class A { constructor(x) { this.x = x; } });
  const a = new ctor(3);
  assert.strictEqual(a.x, 3);
});
test('global mock left enabled', () => {
  mock.timers.enable({ apis: ['setImmediate', 'setTimeout', 'setInterval'] });
});
test('runs after', async () => {});
