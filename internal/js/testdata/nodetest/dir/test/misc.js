const test = require('node:test');
const { describe, it } = test;
test(() => {});
test(function named() {});
test({ skip: false }, function optsFirst() {});
describe('async body', async () => {
  await Promise.resolve();
  it('added after await', () => {});
});
test('nested via global test()', () => {
  test('inner global', () => {});
  it('inner it', () => {});
});
describe('hook styles', () => {
  test.beforeEach(async () => { await new Promise((r) => setTimeout(r, 1)); });
  test.afterEach((t, done) => { setTimeout(done, 1); });
  it('x', () => {});
});
test('error with cause', () => { throw new Error('outer', { cause: new Error('inner') }); });
test('assertion in plan', async (t) => {
  t.plan(1);
  await new Promise((r) => setTimeout(r, 1));
  t.assert.ok(1);
});
test.describe('via test.describe', () => { test.it('via test.it', () => {}); });
test('returns non-promise thenable', () => ({ then(r) { r(); } }));
test('sync throw non-error object', () => { throw { code: 'X', message: 'msg' }; });
