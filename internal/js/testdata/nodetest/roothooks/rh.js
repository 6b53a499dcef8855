const { test, before, after, beforeEach, afterEach, describe, it } = require('node:test');
const seen = [];
before(() => seen.push('root before'));
beforeEach((t) => seen.push('root beforeEach ' + t.name));
afterEach((t) => seen.push('root afterEach ' + t.name));
after(() => { seen.push('root after'); console.log(seen.join('\n')); });
test('first', () => seen.push('first'));
describe('suite', () => { it('in suite', () => seen.push('in suite')); });
test('second', async () => { await new Promise((r) => setTimeout(r, 5)); seen.push('second'); });
