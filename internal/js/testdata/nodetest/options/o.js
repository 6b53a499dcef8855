'use strict';
// test()'s option checks (Node's codes and messages), and a timeout that
// aborts the test's signal and counts it as cancelled.
const test = require('node:test');
const { setTimeout: sleep } = require('node:timers/promises');

for (const o of [{ timeout: '1' }, { timeout: NaN }, { timeout: 2 ** 33 }, { timeout: -1 },
  { concurrency: 1.1 }, { concurrency: 0 }, { concurrency: 2 ** 33 }, { concurrency: '1' },
  { signal: {} }, { signal: null }]) {
  try {
    test(o);
    console.log('accepted', o);
  } catch (e) {
    console.log(e.name, e.code, e.message);
  }
}

let testSignal;
test('times out', { timeout: 10 }, async ({ signal }) => {
  testSignal = signal;
  await sleep(200);
}).finally(() => {
  test('signal aborted', () => { if (!testSignal.aborted) throw new Error('not aborted'); });
});
test('valid options', { timeout: Infinity, concurrency: true, signal: new AbortController().signal }, () => {});
