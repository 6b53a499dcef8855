const test = require('node:test');
test('not only', () => {});
test.only('only this', () => {});
test('only with subtests', { only: true }, async (t) => {
  t.runOnly(true);
  await t.test('skipped sub', () => {});
  await t.test('only sub', { only: true }, () => {});
});
