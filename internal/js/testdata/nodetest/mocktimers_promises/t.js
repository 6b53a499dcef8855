'use strict';
// mock.timers: enable()'s checks, the mocked Date's face (isMock, name,
// source), timers/promises and scheduler.wait on the fake clock, signals,
// and a second tracker refused while Date is mocked.
const { test, mock } = require('node:test');
const assert = require('node:assert');
const tp = require('node:timers/promises');

process.removeAllListeners('warning');

test('enable checks its options', () => {
  for (const o of [{ now: -1 }, { now: 'string' }, { now: NaN }, { apis: ['nope'] }, { apis: 'Date' }, { apis: [1] }]) {
    assert.throws(() => mock.timers.enable(o), (e) => { console.log(e.name, e.code, e.message); return true; });
  }
});

test('the mocked Date looks like Date', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: new Date(5000) });
  assert.strictEqual(Date.isMock, true);
  assert.strictEqual(Date.toString(), 'function Date() { [native code] }');
  assert.strictEqual(Date.name, 'Date');
  assert.strictEqual(Date.length, 7);
  assert.strictEqual(Date.now(), 5000);
  t.test('a second tracker cannot mock Date again', (t2) => {
    assert.throws(() => t2.mock.timers.enable({ apis: ['Date'] }), { code: 'ERR_INVALID_STATE', message: 'Invalid state: Date is already being mocked!' });
  });
});

test('scheduler.wait and setTimeout resolve on tick', async (t) => {
  t.mock.timers.enable({ apis: ['scheduler.wait', 'setTimeout', 'setImmediate'] });
  const order = [];
  const a = tp.scheduler.wait(1000).then((v) => order.push(['wait', v]));
  const b = tp.setTimeout(500, 'value').then((v) => order.push(['timeout', v]));
  t.mock.timers.tick(499);
  await Promise.resolve();
  assert.deepStrictEqual(order, []);
  t.mock.timers.tick(501);
  await Promise.all([a, b]);
  assert.deepStrictEqual(order, [['timeout', 'value'], ['wait', undefined]]);
});

test('signals: invalid, aborted before, aborted while waiting', async (t) => {
  t.mock.timers.enable({ apis: ['scheduler.wait'] });
  await assert.rejects(tp.scheduler.wait(10, { signal: {} }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
  await assert.rejects(tp.scheduler.wait(10, { signal: AbortSignal.abort() }), { name: 'AbortError', code: 'ABORT_ERR' });
  const c = new AbortController();
  const p = tp.scheduler.wait(10, { signal: c.signal });
  c.abort();
  await assert.rejects(p, { name: 'AbortError' });
});

test('reset puts the real clock back', async (t) => {
  t.mock.timers.enable({ apis: ['scheduler.wait', 'Date'] });
  t.mock.timers.reset();
  assert.strictEqual(Date.isMock, undefined);
  assert.strictEqual(await tp.setTimeout(1, 'real'), 'real');
});
