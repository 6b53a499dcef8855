const { test, describe, it, before, after, beforeEach, afterEach } = require('node:test');
const log = [];
process.on('exit', () => console.log(log.join('\n')));
beforeEach(() => log.push('root beforeEach'));
afterEach(() => log.push('root afterEach'));
test('T', async (t) => {
  t.before(() => log.push('T before'));
  t.after(() => log.push('T after'));
  t.beforeEach(() => log.push('T beforeEach'));
  t.afterEach(() => log.push('T afterEach'));
  log.push('T body');
  await t.test('sub1', (t) => { log.push('sub1 body'); t.after(() => log.push('sub1 after')); });
  await t.test('sub2', () => log.push('sub2 body'));
});
describe('D', () => {
  before(() => log.push('D before'));
  after(() => log.push('D after'));
  beforeEach(() => log.push('D beforeEach'));
  afterEach(() => log.push('D afterEach'));
  it('d1', () => log.push('d1'));
  describe('E', () => {
    before(() => log.push('E before'));
    after(() => log.push('E after'));
    it('e1', () => log.push('e1'));
  });
});
