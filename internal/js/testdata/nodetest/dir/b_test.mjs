import test, { describe, it } from 'node:test';
import assert from 'node:assert';
describe('b suite', () => {
  it('b fails', () => { assert.strictEqual('x', 'y'); });
  it('b passes', () => {});
});
test('b top', () => {});
