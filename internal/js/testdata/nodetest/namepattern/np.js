const { test, describe, it } = require('node:test');
test('alpha one', () => {});
test('beta two', () => {});
describe('gamma suite', () => {
  it('alpha inside', () => {});
  it('delta inside', () => {});
});
test('parent alpha', async (t) => {
  await t.test('child of a match', () => {});
});
