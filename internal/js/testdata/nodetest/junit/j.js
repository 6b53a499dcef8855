const { test, describe, it } = require('node:test');
test('passes', () => {});
test('skipped', { skip: 'not now' }, () => {});
test('todo', { todo: true }, () => {});
describe('suite', () => {
  it('one', () => {});
  describe('inner', () => { it('two', () => {}); it.skip('three'); });
});
test('with subtests', async (t) => { await t.test('sub <&> "quoted"', () => {}); });
