const { test, describe, it } = require('node:test');
test('keep me', () => {});
test('drop me', () => {});
describe('suite', () => {
  it('drop inner', () => {});
  it('keep inner', () => {});
});
describe('drop whole suite', () => { it('x', () => {}); });
