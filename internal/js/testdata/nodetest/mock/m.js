const test = require('node:test');
const assert = require('node:assert');
const { mock } = test;
test('mock.fn records calls', () => {
  const fn = mock.fn((a, b) => a + b);
  assert.strictEqual(fn(1, 2), 3);
  fn.call({ x: 1 }, 3, 4);
  assert.strictEqual(fn.mock.callCount(), 2);
  assert.deepStrictEqual(fn.mock.calls.map((c) => c.arguments), [[1, 2], [3, 4]]);
  assert.deepStrictEqual(fn.mock.calls.map((c) => c.result), [3, 7]);
  assert.deepStrictEqual(fn.mock.calls[1].this, { x: 1 });
  fn.mock.mockImplementationOnce(() => 'once');
  assert.strictEqual(fn(0, 0), 'once');
  assert.strictEqual(fn(1, 1), 2);
  fn.mock.resetCalls();
  assert.strictEqual(fn.mock.callCount(), 0);
});
test('mock.fn records errors', () => {
  const fn = mock.fn(() => { throw new Error('inner'); });
  assert.throws(() => fn(), /inner/);
  assert.strictEqual(fn.mock.calls[0].error.message, 'inner');
});
test('mock.method and restore', (t) => {
  const obj = { greet(n) { return `hi ${n}`; } };
  const m = t.mock.method(obj, 'greet', (n) => `yo ${n}`);
  assert.strictEqual(obj.greet('a'), 'yo a');
  assert.strictEqual(m.mock.calls.length, 1);
  m.mock.restore();
  assert.strictEqual(obj.greet('a'), 'hi a');
});
test('getter and setter', () => {
  const obj = { get v() { return 1; }, set v(x) { this._v = x; } };
  const g = mock.getter(obj, 'v', () => 2);
  assert.strictEqual(obj.v, 2);
  assert.strictEqual(g.mock.callCount(), 1);
  mock.restoreAll();
  assert.strictEqual(obj.v, 1);
});
test('mock.timers', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  const fn = mock.fn();
  setTimeout(fn, 1000);
  mock.timers.tick(999);
  assert.strictEqual(fn.mock.callCount(), 0);
  mock.timers.tick(1);
  assert.strictEqual(fn.mock.callCount(), 1);
  mock.timers.reset();
});
test('a failing mock assertion', () => {
  const fn = mock.fn();
  assert.strictEqual(fn.mock.callCount(), 1);
});
