const test = require('node:test');
const assert = require('node:assert');
test('passes', () => {});
test('strictEqual fails', () => { assert.strictEqual(1, 2); });
test('deepStrictEqual fails', () => { assert.strictEqual('a', 'b'); });
test('throws a string', () => { throw 'just a string'; });
test('throws a TypeError', () => { throw new TypeError('bad type'); });
test('error with code', () => { const e = new Error('coded'); e.code = 'E_MINE'; throw e; });
test('multi-line message', () => { throw new RangeError('line one\nline two'); });
