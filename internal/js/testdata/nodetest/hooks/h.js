const { describe, it, before, after, beforeEach, afterEach, test } = require('node:test');
const log = [];
describe('hooks', () => {
  before(() => log.push('before'));
  after(() => { log.push('after'); console.log(log.join(',')); });
  beforeEach((t) => log.push('beforeEach ' + t.name));
  afterEach((t) => log.push('afterEach ' + t.name));
  it('a', () => log.push('a'));
  describe('nested', () => {
    beforeEach(() => log.push('inner beforeEach'));
    it('b', () => log.push('b'));
  });
});
describe('failing before', () => {
  before(() => { throw new Error('before failed'); });
  it('never runs', () => {});
});
describe('failing afterEach', () => {
  afterEach(() => { throw new Error('afterEach failed'); });
  it('runs then fails', () => {});
});
test('context hooks', async (t) => {
  t.beforeEach((t) => log.push('ctx beforeEach ' + t.name));
  t.after(() => log.push('ctx after'));
  await t.test('sub', () => {});
});
