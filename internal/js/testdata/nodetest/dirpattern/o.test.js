const { test, describe, it } = require('node:test');
describe('plain suite', () => {
  it('plain it', () => {});
  it.only('only it', () => {});
});
describe.only('only suite', () => {
  it('runs', () => {});
  describe('nested', () => { it('also runs', () => {}); });
});
describe('suite without only', () => { it('skipped?', () => {}); });
test('plain test', () => {});
test.only('only test', async (t) => {
  await t.test('sub of only', () => {});
});
