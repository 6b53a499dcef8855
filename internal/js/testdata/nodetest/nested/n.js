const { describe, it, suite, test } = require('node:test');
describe('outer', () => {
  it('one', () => {});
  describe('middle', () => {
    it('two', () => {});
    describe('inner', () => {
      it('three', () => {});
      it('four fails', () => { throw new Error('four'); });
    });
  });
  it('five', async () => {});
});
suite('a suite', () => { test('a test in a suite', () => {}); });
describe('empty suite', () => {});
