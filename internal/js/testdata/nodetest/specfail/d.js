const test = require('node:test');
const { describe, it, beforeEach, afterEach, before, after } = test;
describe('S', () => {
  it('bad', () => { throw new Error('x'); });
  it.todo('todo fail', () => { throw new Error('y'); });
  it('ok', () => {});
});
describe('H', () => {
  before(() => { throw new Error('hookfail'); });
  it('never', () => {});
});
describe('AE', () => {
  afterEach(() => { throw new Error('aefail'); });
  it('t1', () => {});
});
test('unawaited', (t) => {
  t.test('child', async () => { await new Promise(r => setTimeout(r, 20)); });
});
test('uncaught', (t) => { setTimeout(() => { throw new Error('late'); }, 1); return new Promise(r => setTimeout(r, 30)); });
test('planned', (t) => { t.plan(1); t.test('s', () => {}); });
test('skipfn', (t) => { t.skip('why'); });
test('todofn', (t) => { t.todo(); });
test('cb style', (t, done) => { setTimeout(done, 1); });
