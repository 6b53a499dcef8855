import { test, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
await test('top-level await test', async () => { assert.equal(1, 1); });
describe('esm suite', () => { it('works', () => { assert.equal(typeof mock.fn, 'function'); }); });
